// GitHub's GraphQL connections: cursors, `first`/`last`/`after`/`before` and their limits,
// shared by every connection the simulator serves.
import { GraphQLError } from "graphql";

export interface ConnectionArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

const cursorOf = (i: number) => btoa(`cursor:v2:${i}`);
function indexOf(cursor: string): number {
  try {
    const m = /^cursor:v2:(\d+)$/.exec(atob(cursor));
    if (m) return Number(m[1]);
  } catch {
    // fall through
  }
  throw new GraphQLError(`\`${cursor}\` does not appear to be a valid cursor.`);
}

/** GitHub's connection rules: `first` or `last` required, each within 1..100. */
export function connection<T, N>(
  items: T[],
  args: ConnectionArgs,
  field: string,
  toNode: (item: T) => N,
) {
  const { first, last } = args;
  if ((first === undefined || first === null) && (last === undefined || last === null))
    throw new GraphQLError(
      `You must provide a \`first\` or \`last\` value to properly paginate the \`${field}\` connection.`,
    );
  for (const [name, value] of [
    ["first", first],
    ["last", last],
  ] as const) {
    if (value !== undefined && value !== null && (value < 0 || value > 100))
      throw new GraphQLError(
        `Requesting ${value} records on the \`${field}\` connection exceeds the \`${name}\` limit of 100 records.`,
      );
  }
  let start = args.after ? indexOf(args.after) + 1 : 0;
  let end = args.before ? indexOf(args.before) : items.length;
  end = Math.min(end, items.length);
  start = Math.min(start, end);
  let from = start;
  let to = end;
  if (first !== undefined && first !== null) to = Math.min(to, from + first);
  if (last !== undefined && last !== null) from = Math.max(from, to - last);
  const nodes = items.slice(from, to).map(toNode);
  return {
    nodes,
    totalCount: items.length,
    pageInfo: {
      hasNextPage: to < end,
      hasPreviousPage: from > start,
      startCursor: nodes.length > 0 ? cursorOf(from) : null,
      endCursor: nodes.length > 0 ? cursorOf(to - 1) : null,
    },
  };
}
