// `/v1` query parameters are checked before any Durable Object is asked (issue 9, fix 7):
// a present, well-formed Authorization header first (401), then the query (400), and only then
// the directory, the RepoObject's keys or GitHub.
import { describe, expect, it } from "vitest";
import { app } from "../../functions/app.ts";
import { trapped } from "./helpers.ts";

// A GitHub user token: proving it asks the directory's name shard (and GitHub) at once.
const BEARER = { authorization: "Bearer gho_query_validation_test" };

async function call(path: string, headers: Record<string, string> = BEARER) {
  const { bindings, touched } = trapped();
  const response = await Promise.resolve(
    app.request(`https://switchyard.test${path}`, { headers }, bindings),
  ).catch(() => new Response("{}", { status: 599 }));
  return {
    status: response.status,
    body: (await response.json()) as Record<string, unknown>,
    touched,
  };
}

describe("/v1 query validation", () => {
  it.each([
    ["/v1/repos/acme/app/graph?machine=", "query machine: machine must be 1 to 200 characters"],
    [
      `/v1/repos/acme/app/graph?machine=${"m".repeat(201)}`,
      "query machine: machine must be 1 to 200 characters",
    ],
    ["/v1/repos/acme/app/graph?limit=0", "query limit: must be at least 1"],
    ["/v1/repos/acme/app/graph?list=blocked&limit=1001", "query limit: must be at most 1000"],
    [
      "/v1/repos/acme/app/graph?list=sideways",
      "query list: must be one of blocked, ready, kicks, rollupCandidates",
    ],
    ["/v1/repos/acme/app/graph?list=ready&cursor=nonsense!", "query cursor: not a cursor"],
    // A cursor of `blocked` (after #5), offered for `ready` or without its list.
    ["/v1/repos/acme/app/graph?list=ready&cursor=eyJsIjoiYmxvY2tlZCIsImEiOjV9", "query cursor:"],
    ["/v1/repos/acme/app/graph?cursor=eyJsIjoiYmxvY2tlZCIsImEiOjV9", "query list:"],
    ["/v1/repos/acme/app/queue?limit=0", "query limit: must be at least 1"],
    ["/v1/repos/acme/app/queue?limit=abc", "query limit:"],
    ["/v1/repos/acme/app/queue?order=sideways", "query order:"],
    ["/v1/repos/acme/app/queue?capabilities=a,,b", "query capabilities:"],
    ["/v1/repos/acme/app/queue?machine=", "query machine:"],
  ])("%s answers 400 without asking a Durable Object", async (path, message) => {
    const r = await call(path);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("bad-request");
    expect(String(r.body.message)).toContain(message);
    expect(r.touched).toEqual([]);
  });

  it("a missing or malformed Authorization header is still a 401 first", async () => {
    const cases: Array<Record<string, string>> = [
      {},
      { authorization: "Basic abc" },
      { authorization: "Bearer" },
    ];
    for (const headers of cases) {
      const r = await call("/v1/repos/acme/app/graph?machine=", headers);
      expect(r.status).toBe(401);
      expect(r.touched).toEqual([]);
    }
  });

  it("a well-formed query goes on to prove the token (the name's shard is asked)", async () => {
    const r = await call("/v1/repos/acme/app/queue?limit=5&machine=m1");
    expect(r.touched.some((t) => t.startsWith("NAMES."))).toBe(true);
    const g = await call("/v1/repos/acme/app/graph?machine=m1");
    expect(g.touched.some((t) => t.startsWith("NAMES."))).toBe(true);
  });
});
