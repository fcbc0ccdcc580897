import { parseFlags } from "../args.ts";
import type { CliCommand } from "../command.ts";
import { apiUrlFlag, fetchSnapshotForCli, requireRepoFlag } from "../github.ts";
import { writeJson } from "../io.ts";

export const fetchSnapshotCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags("fetch-snapshot", argv, {
      repo: { type: "string" },
      "api-url": { type: "string" },
      comments: { type: "boolean" },
    });
    const repo = requireRepoFlag("fetch-snapshot", flags.repo);
    const apiUrl = apiUrlFlag("fetch-snapshot", flags["api-url"]);
    writeJson(
      io,
      await fetchSnapshotForCli(io, repo, apiUrl, "fetch-snapshot", {
        comments: flags.comments === true,
      }),
    );
  },
};
