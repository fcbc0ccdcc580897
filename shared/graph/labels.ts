import type { LabelNames } from "../config/schema.ts";
import { type CompactGraph, ROLE_HUMAN, ROLE_PROCESSING, ROLE_READY, ROLES } from "./compact.ts";

/*
 * The label rules (spec 3.2), over a compact graph (shared/graph/compact.ts): which labels
 * reserve an issue (hold, stuck, epic-managed), when a processing lock is fresh, and an issue's
 * stance between the ready label and the human gate. A label's presence is read from its
 * latest event when the graph holds one, else from the label list.
 */

export type Stance = "ready" | "waiting" | "none";

/** Stances by code, as `stanceAt` returns them. */
export const STANCES: readonly Stance[] = ["none", "ready", "waiting"];
const STANCE_READY = 1;
export const STANCE_WAITING = 2;

/** What a label set holds, as bits (`labelSetBits`). */
export const HAS_READY = 1;
export const HAS_HUMAN = 2;
export const HAS_PROCESSING = 4;
/** Carries the hold label. */
export const SET_HELD = 8;
/** Dead-lettered by the fleet API after repeated failed claims: reserved like hold. */
export const SET_STUCK = 16;
/** Epic-managed: the epic-managed label or any `epic:` label. */
export const SET_EPIC = 32;

/**
 * The bits of each interned label set of `graph` (by label set id), for these label names. Sets
 * no slot uses are left at 0: they are read for no issue.
 */
export function labelSetBits(graph: CompactGraph, labels: LabelNames): Uint8Array {
  const bits = new Uint8Array(graph.labelSets.length);
  for (let id = 0; id < graph.labelSets.length; id++) {
    const set = graph.labelSets[id]!;
    if (set.uses === 0) continue;
    let b = 0;
    for (const l of set.labels) {
      if (l === labels.ready) b |= HAS_READY;
      if (l === labels.needsHuman) b |= HAS_HUMAN;
      if (l === labels.processing) b |= HAS_PROCESSING;
      if (l === labels.hold) b |= SET_HELD;
      if (l === labels.stuck) b |= SET_STUCK;
      if (l === labels.epicManaged || l.startsWith("epic:")) b |= SET_EPIC;
    }
    bits[id] = b;
  }
  return bits;
}

/**
 * When the processing lock of a slot that carries the processing label goes stale: its latest
 * `labeled` event plus the TTL. Never (+Infinity) when no event is known: the label's presence
 * alone counts as a fresh lock (fail closed: never double-process). Fresh while later than now.
 */
export function lockStaleAtMs(graph: CompactGraph, slot: number, ttlMs: number): number {
  const at = graph.labeledMs[slot * ROLES + ROLE_PROCESSING]!;
  return Number.isNaN(at) ? Number.POSITIVE_INFINITY : at + ttlMs;
}

/**
 * The ready label against the human gate, as a code of `STANCES`: the one labeled later wins; on
 * a tie or without timestamps the human gate wins, because waiting wrongly costs less than
 * acting wrongly. `bits` are the slot's label set bits (`labelSetBits`).
 */
export function stanceAt(graph: CompactGraph, slot: number, bits: number): number {
  const { eventMs, eventLabeled } = graph;
  const readyMs = eventMs[slot * ROLES + ROLE_READY]!;
  const humanMs = eventMs[slot * ROLES + ROLE_HUMAN]!;
  const readyPresent = Number.isNaN(readyMs)
    ? (bits & HAS_READY) !== 0
    : eventLabeled[slot * ROLES + ROLE_READY] === 1;
  const humanPresent = Number.isNaN(humanMs)
    ? (bits & HAS_HUMAN) !== 0
    : eventLabeled[slot * ROLES + ROLE_HUMAN] === 1;
  if (readyPresent && humanPresent) {
    return !Number.isNaN(readyMs) && !Number.isNaN(humanMs) && readyMs > humanMs
      ? STANCE_READY
      : STANCE_WAITING;
  }
  if (humanPresent) return STANCE_WAITING;
  if (readyPresent) return STANCE_READY;
  return 0;
}
