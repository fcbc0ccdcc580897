import { z } from "zod";

/**
 * The `sweep-trace` payload the issue-sweep appends to every comment it emits. Version 1 fields
 * are type-checked; the controlled vocabularies of `gate` and `val` are not enforced (a newer
 * sweep may add values, and an unknown value still proves the comment is machine-written).
 * Unknown keys are kept, so a trace renders back to the same JSON.
 */
export const SweepTracePayloadSchema = z.looseObject({
  ver: z.number().int().positive(),
  issue: z.number().int().positive().optional(),
  pr: z.number().int().positive().optional(),
  gate: z.string().optional(),
  val: z.string().optional(),
  run: z.string().optional(),
  runner: z.string().optional(),
  skills: z.string().optional(),
});

export type SweepTracePayload = z.infer<typeof SweepTracePayloadSchema>;

/** `val` values that are themselves a terminal disposition (a PR, a close, a human gate). */
export const TERMINAL_TRACE_VALUES: readonly string[] = ["pr", "close", "needs-human-confirm"];
