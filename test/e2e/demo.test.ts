// The README's promise: `npm start` runs the whole system offline, end to end.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { root, spawnCollect } from "../support/runtimes.ts";

const runDemo = () => spawnCollect(process.execPath, ["infra/dev.ts", "--once"]);

describe("npm start (the local demo)", () => {
  it("installs the App, reconciles, produces, a close reaches agent:ready, a reply and an org claim", async () => {
    const run = await runDemo();
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("First reconcile of acme/rocket (full, GraphQL): 19 issues.");
    expect(run.stdout).toMatch(/ready: +#4 #5 #9 #11 #15/);
    expect(run.stdout).toContain("#8 by acme/sdk#42");
    // The kicks of the first reconcile, the line the README shows (the producer has spent them
    // by the time the story prints: they must not come out empty).
    const kicks =
      "  kicks: #1 child-closed by #2, #3; #9 unblocked by acme/sdk#40; #15 unblocked by #14";
    expect(run.stdout.split("\n")).toContain(kicks);
    expect((await readFile(join(root, "README.md"), "utf8")).split("\n")).toContain(kicks);
    expect(run.stdout).toContain(
      "producer added agent:ready on GitHub: #9 Adopt the new auth flow; #15 Emit structured logs",
    );
    expect(run.stdout).toContain("#1 Launch checklist for v1 is now agent:ready.");
    expect(run.stdout).toMatch(/queue \(agent:ready\): #1 #9 #13 #15/);
    // The fleet story: a minted key, claim-next, a fenced comment, a release.
    expect(run.stdout).toMatch(/Fleet API \(key \S+ "demo fleet"/);
    expect(run.stdout).toMatch(/claim → #\d+ .+: fence \d+, branch issue\/\d+-/);
    expect(run.stdout).toMatch(/fenced comment → posted on #\d+/);
    expect(run.stdout).toContain("release (abandoned)");
    expect(run.stdout).toMatch(/SWITCHYARD_TOKEN=\S+ npx switchyard work --server http/);
    // Issue 22: a person answers an agent's question; the answer becomes a `reply` item within
    // 2 s of its webhook, an agent claims it with `kinds: ["reply"]` and releases it done.
    expect(run.stdout).toContain('alice (write access) answers on GitHub: "');
    const reply =
      /queue\?kinds=reply in (\d+\.\d) s: #10 \(reply: unanswered-human-comment by alice\)/.exec(
        run.stdout,
      );
    expect(reply, run.stdout).not.toBeNull();
    expect(Number(reply![1])).toBeLessThanOrEqual(2);
    expect(run.stdout).toMatch(
      /claim-next kinds \[reply\] → #10 Rewrite billing: kind reply, fence \d+, answering http\S+\/acme\/rocket\/issues\/10#issuecomment-\d+/,
    );
    expect(run.stdout).toContain("release (done) → queue?kinds=reply: empty");
    // Issue 23: an owner key minted by an owner of acme; one claim-next across acme's
    // repositories takes the second repository's work; `switchyard work --org acme` runs a
    // command on an org grant and releases it.
    expect(run.stdout).toMatch(/One queue for acme \(owner key \S+ "demo org fleet"/);
    expect(run.stdout).toMatch(/org queue \(fair\): .*acme\/sdk#42 /);
    // The repositories take turns for one agent: its two claim-nexts touch both.
    const turns = [...run.stdout.matchAll(/org claim-next \(turn \d\) → (acme\/\w+)#\d+/g)].map(
      (m) => m[1],
    );
    expect(turns.sort()).toEqual(["acme/rocket", "acme/sdk"]);
    expect(run.stdout).toMatch(
      /org claim-next \(turn \d\) → acme\/sdk#42 Ship SDK v3: fence \d+, branch issue\/42-ship-sdk-v3/,
    );
    expect(run.stdout).toMatch(/→ working on acme\/\w+#\d+ \(issue\/\d+-\S+\); released done/);
    expect(run.stdout).toMatch(
      /SWITCHYARD_TOKEN=syk_o\S+ npx switchyard work --server http\S+ --org acme/,
    );
  }, 180_000);
});
