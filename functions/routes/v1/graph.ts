import { Hono } from "hono";
import type { Env } from "../../env.ts";
import { directory } from "../../objects/directory-object.ts";

/** `GET /v1/repos/{owner}/{repo}/graph[?machine=]`: the scan of the stored graph plus its watermarks. */
export const graphRoutes = new Hono<{ Bindings: Env }>().get(
  "/v1/repos/:owner/:repo/graph",
  async (c) => {
    const fullName = `${c.req.param("owner")}/${c.req.param("repo")}`;
    const entry = await directory(c.env).lookup(fullName);
    if (!entry || entry.status === "removed") {
      return c.json({ error: `repository ${fullName} is not installed` }, 404);
    }
    const repo = c.env.REPO.get(c.env.REPO.idFromName(String(entry.repoId)));
    // `?machine=` rotates `ready` the way `switchyard scan --machine` does (spec 3.2).
    const machine = c.req.query("machine");
    if (machine !== undefined && (machine === "" || machine.length > 200)) {
      return c.json({ error: "machine must be 1 to 200 characters" }, 400);
    }
    return c.json(await repo.graph(Date.now(), machine));
  },
);
