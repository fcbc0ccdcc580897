import { parseArgs } from "node:util";
import { UsageError } from "./io.ts";

export type OptionSpec = Record<string, { type: "string" | "boolean"; short?: string }>;

/**
 * Strict flag parsing shared by every command: unknown flags, missing values and stray
 * positionals are usage errors (exit 2), never silently ignored.
 */
export function parseFlags<T extends OptionSpec>(command: string, argv: string[], options: T) {
  try {
    const { values } = parseArgs({ args: argv, options, strict: true, allowPositionals: false });
    return values as { [K in keyof T]?: T[K]["type"] extends "boolean" ? boolean : string };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(`${command}: ${message}`);
  }
}

export function requireFlag(command: string, name: string, value: string | undefined): string {
  if (value === undefined || value === "")
    throw new UsageError(`${command}: --${name} is required`);
  return value;
}

/** A non-negative finite number flag, e.g. `--window-hours 2`. */
export function numberFlag(command: string, name: string, value: string | undefined) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0) {
    throw new UsageError(`${command}: --${name} must be a non-negative number, got "${value}"`);
  }
  return n;
}

/** An ISO-8601 instant flag, e.g. `--now 2026-11-29T12:00:00Z`. */
export function instantFlag(command: string, name: string, value: string | undefined) {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(value) || Number.isNaN(ms)) {
    throw new UsageError(`${command}: --${name} must be an ISO-8601 timestamp, got "${value}"`);
  }
  return new Date(ms).toISOString();
}
