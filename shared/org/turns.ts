// `order=fair`'s memory (spec 6.4): per agent id, the repository that agent was last granted
// from, so the next claim-next starts with the repository after it. Bounded: a turn lives
// `TURN_TTL_MS` after its last grant and the owner's object keeps at most `MAX_TURNS` of them
// (the oldest go first); a forgotten turn only means the agent starts again at the first
// repository.

export const TURN_TTL_MS = 6 * 60 * 60_000;
export const MAX_TURNS = 10_000;

export interface Turn {
  agentId: string;
  /** The repository of the agent's last org grant. */
  repoId: number;
  atMs: number;
}

/** The turn still in force at `nowMs`, or null (none, or outlived). */
export function liveTurn(turn: Turn | null, nowMs: number): Turn | null {
  return turn !== null && nowMs - turn.atMs < TURN_TTL_MS && nowMs >= turn.atMs - 60_000
    ? turn
    : null;
}

/** Turns recorded before this instant are forgotten. */
export function turnCutoffMs(nowMs: number): number {
  return nowMs - TURN_TTL_MS;
}
