import { ReleaseRequestSchema } from "../../../shared/fleet/schemas.ts";
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
} from "../fleet.ts";
import { writeJson } from "../io.ts";

const NAME = "release";

export const releaseCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags(NAME, argv, {
      ...CONNECTION_FLAGS,
      issue: { type: "string" },
      "claim-id": { type: "string" },
      fence: { type: "string" },
      outcome: { type: "string" },
      note: { type: "string" },
    });
    const { client } = fleetConnection(io, NAME, flags);
    const issue = issueFlag(NAME, flags.issue);
    const body = checkFlags(
      NAME,
      ReleaseRequestSchema,
      defined({
        claimId: requireFlag(NAME, "claim-id", flags["claim-id"]),
        fence: integerFlag(NAME, "fence", requireFlag(NAME, "fence", flags.fence)),
        outcome: requireFlag(NAME, "outcome", flags.outcome),
        note: flags.note,
      }),
    );
    writeJson(io, await fleetCall(NAME, () => client.release(issue, body)));
  },
};
