/**
 * Strongly connected components of a directed graph over dense node ids `0..size-1`, with
 * Tarjan's algorithm made iterative (a 100k-issue chain cannot overflow the call stack) and run
 * over typed arrays (no per-node allocation, so 100k issues stay linear).
 * Returns only the components that are cycles: two or more nodes, or one node with a self-loop,
 * each as the list of its ids.
 */
export function findCycles(
  size: number,
  adjacency: ReadonlyArray<readonly number[] | undefined>,
  roots: readonly number[],
): number[][] {
  const index = new Int32Array(size).fill(-1);
  const low = new Int32Array(size);
  const onStack = new Uint8Array(size);
  const stack = new Int32Array(size);
  let stackTop = 0;
  const frameNode = new Int32Array(size);
  const frameNext = new Int32Array(size);
  const cycles: number[][] = [];
  let counter = 0;

  for (const root of roots) {
    if (index[root] !== -1) continue;
    let depth = 0;
    frameNode[0] = root;
    frameNext[0] = 0;
    index[root] = low[root] = counter++;
    stack[stackTop++] = root;
    onStack[root] = 1;

    while (depth >= 0) {
      const node = frameNode[depth]!;
      const neighbours = adjacency[node];
      const next = frameNext[depth]!;
      if (neighbours !== undefined && next < neighbours.length) {
        frameNext[depth] = next + 1;
        const to = neighbours[next]!;
        if (index[to] === -1) {
          index[to] = low[to] = counter++;
          stack[stackTop++] = to;
          onStack[to] = 1;
          depth += 1;
          frameNode[depth] = to;
          frameNext[depth] = 0;
        } else if (onStack[to] === 1 && index[to]! < low[node]!) {
          low[node] = index[to]!;
        }
        continue;
      }
      depth -= 1;
      if (depth >= 0) {
        const parent = frameNode[depth]!;
        if (low[node]! < low[parent]!) low[parent] = low[node]!;
      }
      if (low[node] !== index[node]) continue;
      const component: number[] = [];
      let member: number;
      do {
        member = stack[--stackTop]!;
        onStack[member] = 0;
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (neighbours?.includes(node) ?? false)) cycles.push(component);
    }
  }
  return cycles;
}
