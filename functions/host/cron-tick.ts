/**
 * The Worker's cron trigger on the portable host: a tick at every quarter hour of the clock
 * (`*\/15 * * * *`), calling `scheduled`. A tick still running when the next is due makes the
 * next one wait for it rather than overlap.
 */
import { CRON, CRON_INTERVAL_MS } from "./bindings.ts";

export interface CronTicker {
  stop(): Promise<void>;
}

/** The next quarter hour strictly after `nowMs`. */
export function nextTick(nowMs: number, intervalMs = CRON_INTERVAL_MS): number {
  return (Math.floor(nowMs / intervalMs) + 1) * intervalMs;
}

export function startCron(
  scheduled: (scheduledTime: number, cron: string) => Promise<void>,
  log: (message: string, error?: unknown) => void,
): CronTicker {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const arm = () => {
    if (stopped) return;
    const at = nextTick(Date.now());
    timer = setTimeout(() => {
      running = running
        .then(() => scheduled(at, CRON))
        .catch((error: unknown) => log("cron: the scheduled handler failed", error));
      arm();
    }, at - Date.now());
  };
  arm();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
