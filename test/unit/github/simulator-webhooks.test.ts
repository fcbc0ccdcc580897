import { createHmac } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { createGitHubSimulator, type GitHubSimulator } from "../../../infra/github-sim/app.ts";
import { issue, REPO } from "./sim-harness.ts";

const SECRET = "webhook-secret-for-tests";

async function control(sim: GitHubSimulator, method: string, path: string, body?: unknown) {
  const res = await sim.fetch(
    new Request(`http://sim.test/_sim${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

interface Drained {
  id: string;
  event: string;
  action: string;
  body: string;
  headers: Record<string, string>;
}

async function drain(sim: GitHubSimulator): Promise<Drained[]> {
  return (await control(sim, "POST", "/outbox/drain")).body.deliveries as Drained[];
}

async function seeded() {
  // "t" (the token the REST calls send) is the unrestricted user octocat.
  const sim = createGitHubSimulator({ webhookSecret: SECRET, userTokens: ["t"] });
  const seed = await control(sim, "POST", "/seed", {
    snapshot: { repo: REPO, issues: [issue(1), issue(2), issue(3)] },
  });
  expect(seed.status).toBe(200);
  return { sim, installationId: seed.body.installationId as number };
}

describe("simulator webhooks", () => {
  it("signs every delivery with HMAC-SHA256 over the raw body and names event and delivery", async () => {
    const { sim, installationId } = await seeded();
    const created = await drain(sim);
    expect(created.map((d) => `${d.event}.${d.action}`)).toEqual(["installation.created"]);
    await control(sim, "POST", "/repos/acme/app/issues/2/close", {
      stateReason: "not_planned",
      actor: "alice",
    });
    const [closed] = await drain(sim);
    expect(closed!.headers["x-github-event"]).toBe("issues");
    expect(closed!.headers["x-github-delivery"]).toMatch(/^[0-9a-f-]{36}$/);
    const expected = `sha256=${createHmac("sha256", SECRET).update(closed!.body).digest("hex")}`;
    expect(closed!.headers["x-hub-signature-256"]).toBe(expected);
    const payload = JSON.parse(closed!.body);
    expect(payload).toMatchObject({
      action: "closed",
      issue: { number: 2, state: "closed", state_reason: "not_planned" },
      repository: { full_name: "acme/app" },
      installation: { id: installationId },
      sender: { login: "alice" },
    });
    expect(await drain(sim)).toEqual([]);
  });

  it("announces each kind of change through the control API", async () => {
    const { sim } = await seeded();
    await drain(sim);
    const steps: [string, string, unknown][] = [
      ["POST", "/repos/acme/app/issues", { title: "new" }],
      ["PATCH", "/repos/acme/app/issues/1", { title: "renamed" }],
      ["POST", "/repos/acme/app/issues/1/labels", { labels: ["agent:ready"] }],
      ["DELETE", "/repos/acme/app/issues/1/labels/agent%3Aready", {}],
      ["POST", "/repos/acme/app/issues/1/comments", { body: "hi" }],
      ["POST", "/repos/acme/app/issues/1/sub-issues", { child: 2 }],
      ["DELETE", "/repos/acme/app/issues/1/sub-issues/2", {}],
      ["POST", "/repos/acme/app/issues/1/blocked-by", { blocker: 3 }],
      ["DELETE", "/repos/acme/app/issues/1/blocked-by/3", {}],
      ["POST", "/repos/acme/app/issues/3/close", {}],
      ["POST", "/repos/acme/app/issues/3/reopen", {}],
      ["DELETE", "/repos/acme/app/issues/4", {}],
    ];
    for (const [method, path, body] of steps) {
      const res = await control(sim, method, path, body);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    }
    expect((await drain(sim)).map((d) => `${d.event}.${d.action}`)).toEqual([
      "issues.opened",
      "issues.edited",
      "label.created",
      "issues.labeled",
      "issues.unlabeled",
      "issue_comment.created",
      "sub_issues.sub_issue_added",
      "sub_issues.parent_issue_added",
      "sub_issues.sub_issue_removed",
      "sub_issues.parent_issue_removed",
      "issue_dependencies.blocked_by_added",
      "issue_dependencies.blocking_added",
      "issue_dependencies.blocked_by_removed",
      "issue_dependencies.blocking_removed",
      "issues.closed",
      "issues.reopened",
      "issues.deleted",
    ]);
  });

  it("drops, duplicates and reorders deliveries as the fault plan says", async () => {
    const { sim } = await seeded();
    await drain(sim);
    await control(sim, "PUT", "/faults", {
      webhooks: [
        { event: "issues", action: "labeled", kind: "drop" },
        { event: "issues", action: "closed", kind: "duplicate" },
        { event: "issue_comment", kind: "reorder" },
      ],
    });
    await control(sim, "POST", "/repos/acme/app/issues/1/labels", { labels: ["x"] });
    await control(sim, "POST", "/repos/acme/app/issues/1/close", {});
    await control(sim, "POST", "/repos/acme/app/issues/2/comments", { body: "first" });
    await control(sim, "POST", "/repos/acme/app/issues/2/close", {});
    const out = await drain(sim);
    expect(out.map((d) => `${d.event}.${d.action}`)).toEqual([
      "label.created",
      "issues.closed",
      "issues.closed",
      "issues.closed",
      "issue_comment.created",
    ]);
    expect(out[1]!.id).toBe(out[2]!.id); // a duplicate is the same delivery again
  });

  it("pushes deliveries to a configured URL, in order, signed", async () => {
    const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(202).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const { sim } = await seeded();
      const port = (server.address() as AddressInfo).port;
      await control(sim, "PUT", "/config", {
        webhookUrl: `http://127.0.0.1:${port}/webhooks/github`,
      });
      await control(sim, "POST", "/repos/acme/app/issues/1/close", {});
      await control(sim, "POST", "/repos/acme/app/issues/1/reopen", {});
      const pushed = (await control(sim, "GET", "/deliveries")).body.pushed as {
        status: number;
        action: string;
        answeredAtMs: number;
      }[];
      expect(pushed.map((p) => [p.action, p.status])).toEqual([
        ["closed", 202],
        ["reopened", 202],
      ]);
      // When each answer came, on this process's monotonic clock: one after the other.
      expect(pushed[0]!.answeredAtMs).toBeGreaterThan(0);
      expect(pushed[1]!.answeredAtMs).toBeGreaterThanOrEqual(pushed[0]!.answeredAtMs);
      expect(pushed[1]!.answeredAtMs).toBeLessThanOrEqual(performance.now());
      expect(received.map((r) => JSON.parse(r.body).action)).toEqual(["closed", "reopened"]);
      for (const r of received) {
        expect(r.headers["x-hub-signature-256"]).toBe(
          `sha256=${createHmac("sha256", SECRET).update(r.body).digest("hex")}`,
        );
      }
    } finally {
      server.close();
    }
  });

  it("tells the App nothing about repositories it is not installed on, or while suspended", async () => {
    const sim = createGitHubSimulator();
    await control(sim, "POST", "/seed", {
      snapshot: { repo: REPO, issues: [issue(1)] },
      install: false,
    });
    await control(sim, "POST", "/repos/acme/app/issues/1/close", {});
    expect(await drain(sim)).toEqual([]);
    const inst = await control(sim, "POST", "/installations", {
      account: "acme",
      repositories: ["app"],
    });
    await control(sim, "POST", `/installations/${inst.body.id}/suspend`, {});
    await control(sim, "POST", "/repos/acme/app/issues/1/reopen", {});
    expect((await drain(sim)).map((d) => `${d.event}.${d.action}`)).toEqual([
      "installation.created",
      "installation.suspend",
    ]);
  });

  it("seeds a second repository of the same account into the existing installation", async () => {
    const { sim, installationId } = await seeded();
    const second = await control(sim, "POST", "/seed", {
      snapshot: { repo: "acme/lib", issues: [issue(1)] },
    });
    expect(second.body.installationId).toBe(installationId);
    expect(sim.state.installations.size).toBe(1);
    const kinds = (await drain(sim)).map((d) => `${d.event}.${d.action}`);
    expect(kinds).toEqual(["installation.created", "installation_repositories.added"]);
  });

  it("answers bad control input with 400 naming the field", async () => {
    const { sim } = await seeded();
    const res = await control(sim, "POST", "/repos/acme/app/issues/1/close", {
      stateReason: "nope",
    });
    expect(res.status).toBe(400);
    expect(String(res.body.message)).toContain("stateReason");
    const bad = await control(sim, "POST", "/seed", {
      snapshot: { repo: "acme/app", issues: [{ number: "x" }] },
    });
    expect(bad.status).toBe(400);
    expect(String(bad.body.message)).toContain("issues[0].number");
  });

  it("counts requests per endpoint, rate-limited versus free, and exposes them", async () => {
    const { sim } = await seeded();
    const get = (headers: Record<string, string> = {}) =>
      sim.fetch(
        new Request("http://sim.test/repos/acme/app/issues?state=all", {
          headers: { authorization: "token t", ...headers },
        }),
      );
    const first = await get();
    expect(first.headers.get("x-ratelimit-remaining")).toBe("4999");
    const etag = first.headers.get("etag")!;
    const second = await get({ "if-none-match": etag });
    expect(second.status).toBe(304);
    expect(second.headers.get("x-ratelimit-remaining")).toBe("4999");
    const counters = (await control(sim, "GET", "/counters")).body as {
      byEndpoint: Record<string, { total: number; rateLimited: number; free: number }>;
    };
    expect(counters.byEndpoint["GET /repos/{owner}/{repo}/issues"]).toMatchObject({
      total: 2,
      rateLimited: 1,
      free: 1,
    });
  });
});
