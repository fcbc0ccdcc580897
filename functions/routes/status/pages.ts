// The status pages: `/` lists the signed-in user's installations of the App and their
// repositories (GitHub's answer to the user's token); `/repos/{owner}/{repo}` shows one
// repository. Access is the API's: the session's GitHub token is proven for the repository
// (functions/routes/v1/auth.ts, with its cache), or, without a session, a public repository
// whose config says `status.public: true` is shown to anyone.
import { type Context, Hono } from "hono";
import type { AuthFailure } from "../../../shared/auth/access.ts";
import { GitHubApiError } from "../../../shared/github/errors.ts";
import { OwnerParamsSchema } from "../../../shared/org/schemas.ts";
import { type OrgRepoRead, orgPageModel } from "../../../shared/status/org-view.ts";
import {
  homePage,
  type InstallationListing,
  messagePage,
  orgPage,
  repoPage,
  welcomePage,
} from "../../../shared/status/page.ts";
import { clearSessionCookieHeader } from "../../../shared/status/session.ts";
import {
  describeInstallProgress,
  type GraphRead,
  repoPageModel,
  type StatusRead,
} from "../../../shared/status/view.ts";
import type { Env } from "../../env.ts";
import { lookupName } from "../../objects/directory/name-lookup.ts";
import { ownerObject } from "../../objects/owner/owner-object.ts";
import { prove, userClient } from "../v1/auth.ts";
import { repoObject } from "../v1/context.ts";
import { loginUrl, readSession, withSettings } from "./login.ts";

type StatusEnv = { Bindings: Env };

/** Installations and repositories listed on `/` (GitHub pages by 100). */
const INSTALLATIONS_SHOWN = 30;

async function listInstallations(
  env: Env,
  token: string,
  withProgress = true,
): Promise<InstallationListing[]> {
  const client = userClient(env, token);
  const found = await client.send<{
    installations: Array<{ id: number; account: { login: string } | null }>;
  }>({
    operation: "list the signed-in user's installations",
    route: "GET /user/installations",
    params: { per_page: 100 },
    idempotent: true,
  });
  const installations = found.data.installations
    .slice(0, INSTALLATIONS_SHOWN)
    .sort((a, b) => a.id - b.id);
  return Promise.all(
    installations.map(async (i) => {
      const repos = await client.send<{
        total_count: number;
        repositories: Array<{ full_name: string; private: boolean }>;
      }>({
        operation: `list the repositories of installation ${i.id} the user can see`,
        route: "GET /user/installations/{installation_id}/repositories",
        params: { installation_id: i.id, per_page: 100 },
        idempotent: true,
      });
      const repositories = repos.data.repositories
        .map((r) => ({ fullName: r.full_name, private: r.private }))
        .sort((a, b) => a.fullName.localeCompare(b.fullName));
      return {
        id: i.id,
        account: i.account?.login ?? `installation ${i.id}`,
        repositories,
        more: repos.data.total_count > repositories.length,
        progress: withProgress ? await installationProgress(env, i.id) : null,
      };
    }),
  );
}

/** The installation's pacing of full reconciles, in a sentence; null when it did not answer. */
async function installationProgress(env: Env, installationId: number): Promise<string | null> {
  try {
    const stub = env.INSTALLATION.get(env.INSTALLATION.idFromName(String(installationId)));
    return describeInstallProgress((await stub.pacing(null)).installation);
  } catch (error) {
    console.error(`installation ${installationId}: its pacing did not answer`, error);
    return null;
  }
}

const noStore = (c: Context) => c.header("Cache-Control", "private, no-store");

export const statusPages = new Hono<StatusEnv>();

statusPages.get("/", async (c) => {
  const checked = withSettings(c);
  if ("refusal" in checked) return checked.refusal;
  const { settings } = checked;
  noStore(c);
  const session = await readSession(c, settings);
  if (!session) return c.html(welcomePage());
  try {
    return c.html(homePage(session.login, await listInstallations(c.env, session.token)));
  } catch (error) {
    if (error instanceof GitHubApiError && error.kind === "unauthorized") {
      // The token behind the session was revoked: sign in again.
      c.header("Set-Cookie", clearSessionCookieHeader());
      return c.redirect(loginUrl("/", new URL(c.req.url).origin), 302);
    }
    const why = error instanceof GitHubApiError ? error.message : "GitHub did not answer";
    return c.html(messagePage("GitHub did not answer", why, session.login), 503);
  }
});

statusPages.get("/repos/:owner/:repo", async (c) => {
  const checked = withSettings(c);
  if ("refusal" in checked) return checked.refusal;
  const { settings } = checked;
  noStore(c);
  const owner = c.req.param("owner");
  const repo = c.req.param("repo");
  const fullName = `${owner}/${repo}`;
  const here = `/repos/${owner}/${repo}`;
  const session = await readSession(c, settings);
  const nowMs = Date.now();
  const show = async (repoId: number, viewer: string | null) => {
    const stub = repoObject(c.env, repoId);
    const [graph, status] = await Promise.all([
      stub.graph(nowMs) as Promise<unknown> as Promise<GraphRead>,
      stub.statusView(nowMs) as Promise<unknown> as Promise<StatusRead>,
    ]);
    return c.html(
      repoPage(repoPageModel({ graph, status, htmlBase: settings.webUrl, viewer, nowMs })),
    );
  };

  let refused: AuthFailure | null = null;
  if (session) {
    const proven = await prove(c.env, session.token, owner, repo);
    if (proven.ok) {
      if (proven.resolution.ok) return show(proven.resolution.repo.repoId, session.login);
      const r = proven.resolution;
      return c.html(messagePage("Not installed", r.message, session.login), r.status as 404);
    }
    if (proven.status === 401) {
      // GitHub no longer accepts the session's token (revoked or expired): sign in again.
      c.header("Set-Cookie", clearSessionCookieHeader());
      return c.redirect(loginUrl(here, new URL(c.req.url).origin), 302);
    }
    refused = proven;
  }

  // A public repository that opted in (`status.public: true`) is shown to anyone; anything else
  // (private, not installed, not opted in) asks for a login alike, so nothing is revealed.
  const entry = await lookupName(c.env, fullName);
  // The opt-in is asked first: a page nobody may see costs its object no graph scan.
  if (entry && entry.status === "active" && (await repoObject(c.env, entry.repoId).publicPage())) {
    return show(entry.repoId, session?.login ?? null);
  }
  if (!session || !refused) return c.redirect(loginUrl(here, new URL(c.req.url).origin), 302);
  if (refused.retryAfterSeconds !== undefined) {
    c.header("Retry-After", String(refused.retryAfterSeconds));
  }
  const title = refused.status === 403 ? "No access" : "Try again";
  return c.html(messagePage(title, refused.message, session.login), refused.status as 403);
});

/** Repositories an org page reads (each costs its object a call): GitHub lists 100 a page too. */
const ORG_REPOS_SHOWN = 100;

// The owner's page: the repositories of `owner` the viewer may see (GitHub's listing for the
// session's token, as on `/`, plus public repositories whose page opted in), never others'.
statusPages.get("/orgs/:owner", async (c) => {
  const checked = withSettings(c);
  if ("refusal" in checked) return checked.refusal;
  const { settings } = checked;
  noStore(c);
  const parsed = OwnerParamsSchema.safeParse({ owner: c.req.param("owner") });
  if (!parsed.success) {
    const why = `${c.req.param("owner")} is not a GitHub account name: ${parsed.error.issues[0]?.message}.`;
    return c.html(messagePage("No such account", why, null), 404);
  }
  const { owner } = parsed.data;
  const here = `/orgs/${owner}`;
  const lower = owner.toLowerCase();
  const session = await readSession(c, settings);
  const nowMs = Date.now();
  const visible = new Map<string, { fullName: string; private: boolean | null }>();
  if (session) {
    let listings: InstallationListing[];
    try {
      listings = await listInstallations(c.env, session.token, false);
    } catch (error) {
      if (error instanceof GitHubApiError && error.kind === "unauthorized") {
        c.header("Set-Cookie", clearSessionCookieHeader());
        return c.redirect(loginUrl(here, new URL(c.req.url).origin), 302);
      }
      const why = error instanceof GitHubApiError ? error.message : "GitHub did not answer";
      return c.html(messagePage("GitHub did not answer", why, session.login), 503);
    }
    for (const i of listings) {
      if (i.account.toLowerCase() !== lower) continue;
      for (const r of i.repositories) visible.set(r.fullName.toLowerCase(), r);
    }
  }
  // The owner's pushed heads: active ones of this owner only (a withdrawn one is out at once).
  const held = (await ownerObject(c.env, owner).heads())
    .filter(
      (h) =>
        h.status === "active" &&
        h.withdrawnMs === null &&
        h.fullName.split("/")[0]!.toLowerCase() === lower,
    )
    .sort((a, b) => a.repoId - b.repoId)
    .slice(0, ORG_REPOS_SHOWN);
  const headOf = new Map(held.map((h) => [h.fullName.toLowerCase(), h]));
  // Public repositories whose page opted in are anyone's to see, as on their own page (the
  // opt-in is read from stored facts only).
  const others = held.filter((h) => !visible.has(h.fullName.toLowerCase()));
  const open = await Promise.all(others.map((h) => repoObject(c.env, h.repoId).publicPage()));
  others.forEach((h, i) => {
    if (open[i]) visible.set(h.fullName.toLowerCase(), { fullName: h.fullName, private: false });
  });
  // Without a session and nothing public: a login first (nothing said of the owner).
  if (!session && visible.size === 0) {
    return c.redirect(loginUrl(here, new URL(c.req.url).origin), 302);
  }
  const reads: OrgRepoRead[] = await Promise.all(
    [...visible.entries()].slice(0, ORG_REPOS_SHOWN).map(async ([key, r]) => {
      const head = headOf.get(key) ?? null;
      let repoId = head?.repoId ?? null;
      if (repoId === null) {
        const entry = await lookupName(c.env, r.fullName);
        repoId = entry && entry.status === "active" ? entry.repoId : null;
      }
      let stuck: number | null = null;
      if (repoId !== null) {
        try {
          stuck = await repoObject(c.env, repoId).stuckCount();
        } catch (error) {
          console.error(`${r.fullName}: its dead letters were not counted`, error);
        }
      }
      return { fullName: r.fullName, private: r.private, head, stuck };
    }),
  );
  return c.html(
    orgPage(orgPageModel({ owner, viewer: session?.login ?? null, repos: reads, nowMs })),
  );
});
