// The clock GitHub's times are judged by (rate-limit resets and the permits' budget windows,
// token expiries, the client's pacing): the Worker's own, `Date.now()`. Tests that move the
// GitHub simulator's clock past a rate-limit window move this one with it (`offsetMs`), so
// that a large installation's hours of budget pass in a test without sleeping through them
// (test/worker/large/large-installation.test.ts). One per isolate; nothing in production sets it.

export const githubClock = {
  /** How far this clock is ahead of `Date.now()` (0 outside tests). */
  offsetMs: 0,
  now(): number {
    return Date.now() + githubClock.offsetMs;
  },
};
