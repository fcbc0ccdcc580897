import { CommentRequestSchema } from "../../../shared/fleet/schemas.ts";
import { parseFlags, requireFlag } from "../args.ts";
import type { CliCommand } from "../command.ts";
import {
  CONNECTION_FLAGS,
  checkFlags,
  fleetCall,
  fleetConnection,
  integerFlag,
  issueFlag,
} from "../fleet.ts";
import { UsageError, writeJson } from "../io.ts";
import { readTextFile } from "../read-json.ts";

const NAME = "comment";

export const commentCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags(NAME, argv, {
      ...CONNECTION_FLAGS,
      issue: { type: "string" },
      "claim-id": { type: "string" },
      fence: { type: "string" },
      body: { type: "string" },
      "body-file": { type: "string" },
    });
    const { client } = fleetConnection(io, NAME, flags);
    const issue = issueFlag(NAME, flags.issue);
    const claimId = requireFlag(NAME, "claim-id", flags["claim-id"]);
    const fence = integerFlag(NAME, "fence", requireFlag(NAME, "fence", flags.fence));
    if ((flags.body === undefined) === (flags["body-file"] === undefined)) {
      throw new UsageError(`${NAME}: give exactly one of --body TEXT or --body-file FILE`);
    }
    const fromFile = flags["body-file"] !== undefined;
    const text =
      flags.body ??
      (await readTextFile(io, NAME, requireFlag(NAME, "body-file", flags["body-file"])));
    let body: ReturnType<typeof CommentRequestSchema.parse>;
    try {
      body = checkFlags(NAME, CommentRequestSchema, { claimId, fence, body: text });
    } catch (error) {
      if (fromFile && error instanceof UsageError) {
        throw new UsageError(error.message.replace("--body ", "--body-file "));
      }
      throw error;
    }
    writeJson(io, await fleetCall(NAME, () => client.comment(issue, body)));
  },
};
