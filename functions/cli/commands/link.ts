import {
  addBlockedBy,
  addSubIssue,
  removeBlockedBy,
  removeSubIssue,
} from "../../../shared/github/writes.ts";
import { parseFlags } from "../args.ts";
import type { CliCommand } from "../command.ts";
import { apiUrlFlag, cliClient, operationError, requireRepoFlag } from "../github.ts";
import { UsageError, writeJson } from "../io.ts";

/** `12` or `owner/name#12`, as the snapshot writes references. */
function issueFlag(name: string, value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  if (/^[1-9]\d{0,9}$/.test(value)) return Number(value);
  if (/^[A-Za-z0-9][A-Za-z0-9-]{0,38}\/[A-Za-z0-9._-]{1,100}#[1-9]\d{0,9}$/.test(value))
    return value;
  throw new UsageError(`link: --${name} must be an issue number or OWNER/NAME#N, got "${value}"`);
}

export const linkCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags("link", argv, {
      repo: { type: "string" },
      parent: { type: "string" },
      child: { type: "string" },
      issue: { type: "string" },
      "blocked-by": { type: "string" },
      remove: { type: "boolean" },
      "api-url": { type: "string" },
    });
    const repo = requireRepoFlag("link", flags.repo);
    const apiUrl = apiUrlFlag("link", flags["api-url"]);
    const parent = issueFlag("parent", flags.parent);
    const child = issueFlag("child", flags.child);
    const issue = issueFlag("issue", flags.issue);
    const blocker = issueFlag("blocked-by", flags["blocked-by"]);
    const subIssue = parent !== undefined || child !== undefined;
    const dependency = issue !== undefined || blocker !== undefined;
    if (subIssue === dependency) {
      throw new UsageError("link: give either --parent N --child M or --issue N --blocked-by M");
    }
    if (subIssue && (parent === undefined || child === undefined)) {
      throw new UsageError("link: --parent and --child go together");
    }
    if (dependency && (issue === undefined || blocker === undefined)) {
      throw new UsageError("link: --issue and --blocked-by go together");
    }
    const client = cliClient(io, "link", apiUrl);
    try {
      if (subIssue) {
        if (flags.remove) {
          const { removed } = await removeSubIssue(client, repo, parent!, child!);
          writeJson(io, { repo, parent, child, action: removed ? "removed" : "absent" });
        } else {
          await addSubIssue(client, repo, parent!, child!);
          writeJson(io, { repo, parent, child, action: "added" });
        }
      } else if (flags.remove) {
        const { removed } = await removeBlockedBy(client, repo, issue!, blocker!);
        writeJson(io, { repo, issue, blockedBy: blocker, action: removed ? "removed" : "absent" });
      } else {
        await addBlockedBy(client, repo, issue!, blocker!);
        writeJson(io, { repo, issue, blockedBy: blocker, action: "added" });
      }
    } catch (error) {
      operationError("link", error);
    }
  },
};
