import { DEFAULT_CONFIG } from "../../../shared/config/schema.ts";
import { resolveClaims } from "../../../shared/idd/claims.ts";
import { ValidationError } from "../../../shared/validation.ts";
import { instantFlag, numberFlag, parseFlags, requireFlag } from "../args.ts";
import type { CliCommand } from "../command.ts";
import { UsageError, writeJson } from "../io.ts";
import { readJsonFile } from "../read-json.ts";

const NAME = "claim-state";

/** `a,b` → ["a", "b"]; `""` → [] (trust nobody); absent → null (every author counts). */
function loginList(value: string | undefined): string[] | null {
  if (value === undefined) return null;
  return value
    .split(",")
    .map((login) => login.trim())
    .filter((login) => login !== "");
}

export const claimStateCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags(NAME, argv, {
      comments: { type: "string" },
      now: { type: "string" },
      "stale-hours": { type: "string" },
      trusted: { type: "string" },
      "claim-id": { type: "string" },
      nonce: { type: "string" },
      "handoff-mode": { type: "string" },
      "handoff-authorized": { type: "string" },
      "open-pr": { type: "string" },
    });
    const path = requireFlag(NAME, "comments", flags.comments);
    const now = instantFlag(NAME, "now", flags.now) ?? io.now().toISOString();
    const staleHours = numberFlag(NAME, "stale-hours", flags["stale-hours"]);
    if (staleHours === 0) throw new UsageError(`${NAME}: --stale-hours must be greater than 0`);
    const mode = flags["handoff-mode"] ?? "disabled";
    if (mode !== "disabled" && mode !== "human-gated") {
      throw new UsageError(
        `${NAME}: --handoff-mode must be disabled or human-gated, got "${mode}"`,
      );
    }
    const openPr = flags["open-pr"];
    if (openPr !== undefined && !/^[1-9]\d{0,9}$/.test(openPr)) {
      throw new UsageError(`${NAME}: --open-pr must be a pull request number, got "${openPr}"`);
    }
    const comments = await readJsonFile(io, NAME, path);
    try {
      writeJson(
        io,
        resolveClaims(comments, {
          now,
          staleHours: staleHours ?? DEFAULT_CONFIG.idd.staleHours,
          trusted: loginList(flags.trusted),
          claimId: flags["claim-id"] || null,
          nonce: flags.nonce || null,
          forcedHandoff: {
            mode,
            authorized: loginList(flags["handoff-authorized"]) ?? [],
            openPullRequest: openPr === undefined ? null : Number(openPr),
          },
        }),
      );
    } catch (error) {
      if (error instanceof ValidationError)
        throw new UsageError(`${NAME}: ${path}: ${error.message}`);
      throw error;
    }
  },
};
