// The queue's order (shared/queue/order.ts, spec 6.4's table) on queues of 1,000 to 100,000
// items, as the queue view holds them (ascending by number, a fifth in the mode `all` section,
// two thirds ranked): claim-next orders the whole queue on every call, so this is on the path
// of every grant.

import { orderQueue, QUEUE_ORDERS } from "../shared/queue/order.ts";
import type { Benchmark } from "./benchmark.ts";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export const queueOrderBenchmark: Benchmark = {
  name: "queue-order",
  async run() {
    const report = ["items    order     median ms   ns/item"];
    const figures: Record<string, number> = {};
    for (const n of [1_000, 10_000, 100_000]) {
      const items = Array.from({ length: n }, (_, k) => ({
        number: k + 1,
        section: (k % 5 === 0 ? 3 : 2) as 2 | 3,
        impact: (k * 7919) % 13,
        priority: k % 3 === 0 ? null : k % 4,
      }));
      for (const order of QUEUE_ORDERS) {
        for (let w = 0; w < 3; w++) orderQueue(items, order, "box-1");
        const times: number[] = [];
        for (let r = 0; r < (n >= 100_000 ? 9 : 31); r++) {
          const start = performance.now();
          orderQueue(items, order, "box-1");
          times.push(performance.now() - start);
        }
        const ms = median(times);
        figures[`${order}@${n}`] = ms;
        report.push(
          `${String(n).padEnd(8)} ${order.padEnd(9)} ${ms.toFixed(2).padStart(9)}   ${((ms * 1e6) / n).toFixed(0).padStart(7)}`,
        );
      }
    }
    return { report, targets: [], figures };
  },
};
