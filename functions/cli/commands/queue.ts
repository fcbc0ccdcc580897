import { parseKindList, QueueQuerySchema } from "../../../shared/fleet/schemas.ts";
import { parseFlags } from "../args.ts";
import type { CliCommand } from "../command.ts";
import {
  CONNECTION_FLAGS,
  checkFlags,
  defined,
  fleetCall,
  fleetConnection,
  integerFlag,
  listFlag,
} from "../fleet.ts";
import { writeJson } from "../io.ts";

const NAME = "queue";

export const queueCommand: CliCommand = {
  async run(argv, io) {
    const flags = parseFlags(NAME, argv, {
      ...CONNECTION_FLAGS,
      machine: { type: "string" },
      capabilities: { type: "string" },
      limit: { type: "string" },
      order: { type: "string" },
      kinds: { type: "string" },
    });
    const { client } = fleetConnection(io, NAME, flags);
    const capabilities = listFlag(flags.capabilities);
    const kinds = listFlag(flags.kinds);
    const query = checkFlags(
      NAME,
      QueueQuerySchema,
      defined({
        machine: flags.machine,
        capabilities: capabilities?.join(","),
        limit: integerFlag(NAME, "limit", flags.limit),
        order: flags.order,
        kinds: kinds?.join(","),
      }),
    );
    const queue = await fleetCall(NAME, () =>
      client.queue({
        machine: query.machine,
        capabilities,
        limit: flags.limit === undefined ? undefined : query.limit,
        order: query.order,
        kinds: parseKindList(query.kinds),
      }),
    );
    writeJson(io, queue);
  },
};
