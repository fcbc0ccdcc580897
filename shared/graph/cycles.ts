/**
 * Strongly connected components of a directed graph given as adjacency lists, with Tarjan's
 * algorithm made iterative so a 100k-issue chain cannot overflow the call stack.
 * Returns only the components that are cycles: two or more nodes, or one node with a self-loop.
 * Each component is sorted ascending; components are sorted by their first node.
 */
export function findCycles(
  nodes: readonly number[],
  edges: ReadonlyMap<number, readonly number[]>,
) {
  const index = new Map<number, number>();
  const low = new Map<number, number>();
  const onStack = new Set<number>();
  const stack: number[] = [];
  const cycles: number[][] = [];
  let counter = 0;

  for (const root of nodes) {
    if (index.has(root)) continue;
    // Each frame: the node and the position of the next neighbour to visit.
    const frames: Array<[number, number]> = [[root, 0]];
    index.set(root, counter);
    low.set(root, counter);
    counter += 1;
    stack.push(root);
    onStack.add(root);

    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const [node, next] = frame;
      const neighbours = edges.get(node) ?? [];
      if (next < neighbours.length) {
        frame[1] = next + 1;
        const to = neighbours[next]!;
        if (!index.has(to)) {
          index.set(to, counter);
          low.set(to, counter);
          counter += 1;
          stack.push(to);
          onStack.add(to);
          frames.push([to, 0]);
        } else if (onStack.has(to)) {
          low.set(node, Math.min(low.get(node)!, index.get(to)!));
        }
        continue;
      }
      frames.pop();
      const parent = frames[frames.length - 1];
      if (parent) low.set(parent[0], Math.min(low.get(parent[0])!, low.get(node)!));
      if (low.get(node) !== index.get(node)) continue;
      const component: number[] = [];
      let member: number;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || neighbours.includes(node)) {
        cycles.push(component.sort((a, b) => a - b));
      }
    }
  }
  return cycles.sort((a, b) => a[0]! - b[0]!);
}
