import { parseKindList, QueueQuerySchema } from "../../../shared/fleet/schemas.ts";
import { OrgQueueQuerySchema } from "../../../shared/org/schemas.ts";
import { parseFlags } from "../args.ts";
import type { CliCommand } from "../command.ts";
import {
  CONNECTION_FLAGS,
  checkFlags,
  defined,
  fleetCall,
  fleetConnection,
  integerFlag,
  listFlag,
  ORG_FLAG,
  orgConnection,
} from "../fleet.ts";
import { UsageError, writeJson } from "../io.ts";

const NAME = "queue";

export const queueCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags(NAME, argv, {
      ...CONNECTION_FLAGS,
      machine: { type: "string" },
      capabilities: { type: "string" },
      limit: { type: "string" },
      order: { type: "string" },
      ...ORG_FLAG,
      kinds: { type: "string" },
      repos: { type: "string" },
    });
    const capabilities = listFlag(flags.capabilities);
    const org = orgConnection(io, NAME, flags);
    if (org !== null) {
      // The org queue: the owner's repositories the token may use, each item with its `repo`.
      const q = checkFlags(
        NAME,
        OrgQueueQuerySchema,
        defined({
          capabilities: capabilities?.join(","),
          kinds: listFlag(flags.kinds)?.join(","),
          limit: integerFlag(NAME, "limit", flags.limit),
          order: flags.order,
          repos: listFlag(flags.repos)?.join(","),
        }),
      );
      const answer = await fleetCall(NAME, () =>
        org.client.queue({
          capabilities,
          kinds: listFlag(flags.kinds),
          limit: flags.limit === undefined ? undefined : q.limit,
          order: q.order,
          repos: listFlag(flags.repos),
        }),
      );
      writeJson(io, answer);
      return;
    }
    if (flags.repos !== undefined) throw new UsageError(`${NAME}: --repos goes with --org`);
    const { client } = fleetConnection(io, NAME, flags);
    const kinds = listFlag(flags.kinds);
    const query = checkFlags(
      NAME,
      QueueQuerySchema,
      defined({
        machine: flags.machine,
        capabilities: capabilities?.join(","),
        limit: integerFlag(NAME, "limit", flags.limit),
        order: flags.order,
        kinds: kinds?.join(","),
      }),
    );
    const queue = await fleetCall(NAME, () =>
      client.queue({
        machine: query.machine,
        capabilities,
        limit: flags.limit === undefined ? undefined : query.limit,
        order: query.order,
        kinds: parseKindList(query.kinds),
      }),
    );
    writeJson(io, queue);
  },
};
