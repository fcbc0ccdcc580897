import { ClaimNextRequestSchema, ClaimRequestSchema } from "../../../shared/fleet/schemas.ts";
import { OrgClaimRequestSchema } from "../../../shared/org/schemas.ts";
import { parseFlags, requireFlag } from "../args.ts";
import type { CliCommand } from "../command.ts";
import {
  CONNECTION_FLAGS,
  checkFlags,
  defined,
  fleetCall,
  fleetConnection,
  integerFlag,
  issueFlag,
  listFlag,
  ORG_FLAG,
  orgConnection,
} from "../fleet.ts";
import { UsageError, writeJson } from "../io.ts";

const NAME = "claim";

/**
 * `claim --issue N` claims that issue; without `--issue` it claims the queue's first issue
 * (claim-next) and prints `null` when there is no work (still exit 0).
 */
export const claimCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags(NAME, argv, {
      ...CONNECTION_FLAGS,
      issue: { type: "string" },
      "agent-id": { type: "string" },
      "ttl-seconds": { type: "string" },
      machine: { type: "string" },
      capabilities: { type: "string" },
      kinds: { type: "string" },
      kind: { type: "string" },
      ...ORG_FLAG,
    });
    const agentId = requireFlag(NAME, "agent-id", flags["agent-id"]);
    const ttlSeconds = integerFlag(NAME, "ttl-seconds", flags["ttl-seconds"]);
    const org = orgConnection(io, NAME, flags);
    if (org !== null) {
      // claim-next across the owner's repositories; the grant names its `repo`.
      if (flags.issue !== undefined) {
        throw new UsageError(`${NAME}: --issue goes with --repo (an org claim is claim-next)`);
      }
      const body = checkFlags(
        NAME,
        OrgClaimRequestSchema,
        defined({
          agentId,
          ttlSeconds,
          machine: flags.machine,
          capabilities: listFlag(flags.capabilities),
        }),
      );
      const grant = await fleetCall(NAME, () => org.client.claimNext(body));
      if (grant === null) io.stderr(`${NAME}: the org queue is empty: nothing to claim\n`);
      writeJson(io, grant);
      return;
    }
    const { client } = fleetConnection(io, NAME, flags);
    if (flags.issue !== undefined) {
      if (flags.capabilities !== undefined || flags.kinds !== undefined) {
        throw new UsageError(
          `${NAME}: --capabilities and --kinds go with claim-next (no --issue): they pick which issue`,
        );
      }
      const issue = issueFlag(NAME, flags.issue);
      const body = checkFlags(
        NAME,
        ClaimRequestSchema,
        defined({ agentId, ttlSeconds, machine: flags.machine, kind: flags.kind }),
      );
      writeJson(io, await fleetCall(NAME, () => client.claim(issue, body)));
      return;
    }
    const body = checkFlags(
      NAME,
      ClaimNextRequestSchema,
      defined({
        agentId,
        ttlSeconds,
        machine: flags.machine,
        capabilities: listFlag(flags.capabilities),
        kinds: listFlag(flags.kinds),
      }),
    );
    if (flags.kind !== undefined) {
      throw new UsageError(`${NAME}: --kind goes with --issue; claim-next takes --kinds`);
    }
    const next = await fleetCall(NAME, () => client.claimNextOrIdle(body));
    if ("idle" in next) {
      io.stderr(
        next.idle.reason === "paused"
          ? `${NAME}: paused since ${next.idle.since}: the default branch is red, only repair issues are handed out\n`
          : `${NAME}: the queue is empty: nothing to claim\n`,
      );
    }
    writeJson(io, "grant" in next ? next.grant : null);
  },
};
