// Golden reply histories (test/fixtures/replies/*.json), from the issue-sweep seed's archetypes:
// each a snapshot with comments, the configuration it runs under and the replies it must give.
// The same files drive the offline scan (unit) and the Worker through webhooks (worker).
import { readdir, readFile } from "node:fs/promises";
import { ConfigSchema } from "../../shared/config/schema.ts";
import type { ReplyFixture } from "./worker-reply-fixture.ts";

export type { ReplyFixture };

const dir = new URL("../fixtures/replies/", import.meta.url);

export async function loadReplyFixtures(): Promise<ReplyFixture[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith(".json")).sort();
  return Promise.all(
    names.map(async (file) => {
      const raw = JSON.parse(await readFile(new URL(file, dir), "utf8")) as Omit<
        ReplyFixture,
        "name"
      >;
      return { ...raw, config: raw.config ?? {}, name: file.replace(/\.json$/, "") };
    }),
  );
}

export function fixtureConfig(fixture: ReplyFixture) {
  return ConfigSchema.parse(fixture.config);
}
