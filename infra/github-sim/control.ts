// The control API under `/_sim`: what a test, the local demo or a person drives the simulator
// with. It acts as a user would on github.com (every change emits its webhooks), and reads and
// resets counters, faults, the clock and the webhook outbox. Never counted, never rate-limited.
import type { Context } from "hono";
import { z } from "zod";
import { describeZodError } from "../../shared/validation.ts";
import type { GitHubSimulator } from "./app.ts";
import { conflict, type FileChanges, isFilePath, pushFiles, seedFiles } from "./contents.ts";
import { FaultPlanSchema } from "./faults.ts";
import {
  hasScopes,
  REPO_ROLES,
  type SimCommit,
  type SimRepo,
  type SimUserToken,
  tokenKindOf,
} from "./model.ts";
import { exportSnapshot, seedSnapshot } from "./seed.ts";
import { SimHttpError } from "./state.ts";

const Actor = z.string().min(1).default("octocat");
/** `owner/name`. */
export const RepoName = z.string().regex(/^[^/\s]+\/[^/\s]+$/, 'expected "owner/name"');
const Permissions = z.record(z.string().min(1), z.enum(["read", "write"]));
const Ref = z.union([z.number().int().positive(), z.string().min(1)]);
const FilePath = z
  .string()
  .refine(isFilePath, 'expected a relative "/"-separated path without empty, "." or ".." segments');
const SeedFiles = z.record(FilePath, z.string()).superRefine((files, ctx) => {
  const clash = conflict(Object.keys(files));
  if (clash) ctx.addIssue({ code: "custom", message: clash });
});

/** A user's token: any kind but an installation token (those are minted by the App). */
const UserToken = z
  .string()
  .min(1)
  .refine(
    (t) => tokenKindOf(t) !== "installation",
    "ghs_ tokens are installation tokens: mint one with POST /app/installations/{id}/access_tokens",
  );
/** What a token may do: classic and OAuth tokens' scopes, a `ghu_` token's App. */
const TokenGrantFields = {
  scopes: z.array(z.string().min(1)).optional(),
  clientId: z.string().min(1).nullable().optional(),
};
/** A grant that the token's kind cannot carry is a mistake in the test: say so. */
function checkGrant(token: string, grant: { scopes?: string[]; clientId?: string | null }) {
  const kind = tokenKindOf(token);
  if (grant.scopes !== undefined && !hasScopes(kind))
    throw new SimHttpError(
      400,
      `control API: scopes: a ${kind} token has no scopes (only ghp_, gho_ and unprefixed tokens do)`,
    );
  if (grant.clientId !== undefined && grant.clientId !== null && kind !== "app-user")
    throw new SimHttpError(400, "control API: clientId: only a ghu_ token belongs to a GitHub App");
}
const tokenView = (t: SimUserToken) => ({ kind: t.kind, scopes: t.scopes, clientId: t.clientId });

/** Parses a control API body with `schema`; bad input answers 400 naming the field. */
export async function input<T extends z.ZodType>(c: Context, schema: T): Promise<z.infer<T>> {
  const text = await c.req.text();
  let raw: unknown = {};
  if (text.trim() !== "") {
    try {
      raw = JSON.parse(text);
    } catch {
      throw new SimHttpError(400, "control API: body is not JSON");
    }
  }
  const result = schema.safeParse(raw);
  if (!result.success)
    throw new SimHttpError(400, `control API: ${describeZodError(result.error)}`);
  return result.data;
}

/** The limits' configuration, and each installation's hourly limit as computed now. */
function limitsView(sim: GitHubSimulator) {
  const { limits, concurrency } = sim;
  return {
    limit: limits.limit,
    installation: limits.scaling,
    scale: limits.scale,
    windowSeconds: limits.windowSeconds,
    concurrency: concurrency.limit,
    retryAfterSeconds: concurrency.retryAfterSeconds,
    installations: Object.fromEntries(
      [...sim.state.installations.keys()].map((id) => [
        String(id),
        limits.limitOf(`installation:${id}`),
      ]),
    ),
  };
}

export function registerControlRoutes(sim: GitHubSimulator): void {
  const { app, state } = sim;
  const issue = (c: Context) => {
    const repo = state.requireRepo(c.req.param("owner")!, c.req.param("repo")!);
    return { repo, issue: state.requireIssue(repo, Number(c.req.param("number"))) };
  };
  const view = (_c: Context, i: ReturnType<typeof issue>["issue"]) => ({
    id: i.id,
    node_id: i.nodeId,
    number: i.number,
    state: i.state,
    state_reason: i.stateReason,
    labels: i.labels,
    updated_at: i.updatedAt,
  });

  app.get("/_sim/health", (c) => c.json({ ok: true }));

  app.post("/_sim/reset", (c) => {
    sim.reset();
    return c.json({ ok: true });
  });

  app.post("/_sim/users", async (c) => {
    const body = await input(
      c,
      z.object({
        login: z.string().regex(/^[^/\s]+$/, "expected a login"),
        token: UserToken,
        repos: z.record(RepoName, z.enum(REPO_ROLES)).default({}),
        ...TokenGrantFields,
      }),
    );
    checkGrant(body.token, body);
    const user = state.registerUser(body.login, body.token, body.repos, body);
    return c.json({ login: user.login }, 201);
  });

  // Another token of a registered user (a `ghu_` from the App besides a `ghp_`, say).
  app.post("/_sim/users/:login/tokens", async (c) => {
    const body = await input(c, z.object({ token: UserToken, ...TokenGrantFields }));
    checkGrant(body.token, body);
    const user = state.user(c.req.param("login"));
    if (!user)
      throw new SimHttpError(404, `control API: no registered user ${c.req.param("login")}`);
    return c.json(
      { login: user.login, ...tokenView(state.addUserToken(user, body.token, body)) },
      201,
    );
  });

  app.post("/_sim/seed", async (c) => {
    const body = await input(
      c,
      z.object({
        snapshot: z.unknown(),
        install: z.boolean().default(true),
        installationId: z.number().int().positive().optional(),
        files: SeedFiles.optional(),
      }),
    );
    let result: ReturnType<typeof seedSnapshot>;
    try {
      result = seedSnapshot(state, body.snapshot);
    } catch (error) {
      throw new SimHttpError(400, error instanceof Error ? error.message : String(error));
    }
    let installationId: number | null = null;
    const [owner, name] = result.repo.split("/") as [string, string];
    const repo = state.requireRepo(owner, name);
    if (body.files) await seedFiles(state, repo, body.files);
    if (body.install) {
      const covering = state.installationFor(repo);
      const sameAccount = [...state.installations.values()].find(
        (i) => i.account.toLowerCase() === owner.toLowerCase(),
      );
      if (covering) installationId = covering.id;
      else if (sameAccount) {
        // GitHub has one installation per account: widen it instead of installing twice.
        state.changeInstallationRepos(sameAccount, [name], [], "octocat");
        installationId = sameAccount.id;
      } else installationId = state.install(owner, [name], "octocat", body.installationId).id;
    }
    return c.json({ ...result, repoId: repo.id, installationId });
  });

  app.get("/_sim/repos/:owner/:repo/snapshot", (c) => {
    const labels = c.req.query("labelEventsFor")?.split(",") ?? [];
    return c.json(
      exportSnapshot(state, c.req.param("owner"), c.req.param("repo"), {
        includeBody: c.req.query("body") === "1",
        labelEventsFor: (i) => i.labels.some((l) => labels.includes(l)),
      }),
    );
  });

  app.post("/_sim/repos", async (c) => {
    const body = await input(c, z.object({ owner: z.string().min(1), name: z.string().min(1) }));
    const repo = state.createRepo(body.owner, body.name);
    return c.json(
      { id: repo.id, node_id: repo.nodeId, full_name: `${repo.owner}/${repo.name}` },
      201,
    );
  });

  // --- repository lifecycle: what an owner does in the repository's settings ----------------
  const repoView = (r: SimRepo) => ({
    id: r.id,
    node_id: r.nodeId,
    full_name: `${r.owner}/${r.name}`,
    archived: r.archived,
    private: r.private,
  });
  const repoOf = (c: Context) => state.requireRepo(c.req.param("owner")!, c.req.param("repo")!);

  app.post("/_sim/repos/:owner/:repo/rename", async (c) => {
    const body = await input(
      c,
      z.object({
        name: z.string().regex(/^[A-Za-z0-9._-]+$/, "expected a repository name"),
        actor: Actor,
      }),
    );
    const repo = repoOf(c);
    state.renameRepo(repo, body.name, body.actor);
    return c.json(repoView(repo));
  });

  app.post("/_sim/repos/:owner/:repo/transfer", async (c) => {
    const body = await input(
      c,
      z.object({ to: z.string().regex(/^[^/\s]+$/, "expected an account login"), actor: Actor }),
    );
    const repo = repoOf(c);
    state.transferRepo(repo, body.to, body.actor);
    return c.json({ ...repoView(repo), installationId: state.installationFor(repo)?.id ?? null });
  });

  app.delete("/_sim/repos/:owner/:repo", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    const repo = repoOf(c);
    state.deleteRepo(repo, body.actor);
    return c.json({ deleted: true, id: repo.id });
  });

  for (const [action, archived] of [
    ["archive", true],
    ["unarchive", false],
  ] as const) {
    app.post(`/_sim/repos/:owner/:repo/${action}`, async (c) => {
      const body = await input(c, z.object({ actor: Actor }));
      const repo = repoOf(c);
      state.setArchived(repo, archived, body.actor);
      return c.json(repoView(repo));
    });
  }

  app.post("/_sim/repos/:owner/:repo/visibility", async (c) => {
    const body = await input(c, z.object({ private: z.boolean(), actor: Actor }));
    const repo = repoOf(c);
    state.setPrivate(repo, body.private, body.actor);
    return c.json(repoView(repo));
  });

  const pushed = (commit: SimCommit | null) =>
    commit === null
      ? { commit: null }
      : {
          commit: {
            id: commit.id,
            parents: commit.parents,
            message: commit.message,
            added: commit.added,
            modified: commit.modified,
            removed: commit.removed,
          },
        };
  const push = async (
    c: Context,
    changes: FileChanges,
    message?: string,
    actor = "octocat",
    opts: { allowEmpty?: boolean; force?: boolean } = {},
  ) => {
    const repo = state.requireRepo(c.req.param("owner")!, c.req.param("repo")!);
    return c.json(pushed(await pushFiles(state, repo, changes, { actor, message, ...opts })));
  };

  app.put("/_sim/repos/:owner/:repo/contents/:path{.+}", async (c) => {
    const body = await input(
      c,
      z.object({ text: z.string(), message: z.string().min(1).optional(), actor: Actor }),
    );
    return push(c, { [c.req.param("path")]: body.text }, body.message, body.actor);
  });

  app.delete("/_sim/repos/:owner/:repo/contents/:path{.+}", async (c) => {
    const body = await input(c, z.object({ message: z.string().min(1).optional(), actor: Actor }));
    return push(c, { [c.req.param("path")]: null }, body.message, body.actor);
  });

  app.post("/_sim/repos/:owner/:repo/push", async (c) => {
    const body = await input(
      c,
      z.object({
        files: z.record(FilePath, z.string().nullable()).default({}),
        message: z.string().min(1).optional(),
        // A new head commit even when no file changes (what CI runs on).
        allowEmpty: z.boolean().default(false),
        force: z.boolean().default(false),
        actor: Actor,
      }),
    );
    return push(c, body.files, body.message, body.actor, {
      allowEmpty: body.allowEmpty,
      force: body.force,
    });
  });

  app.post("/_sim/repos/:owner/:repo/issues", async (c) => {
    const body = await input(
      c,
      z.object({
        title: z.string().min(1),
        body: z.string().nullable().optional(),
        labels: z.array(z.string().min(1)).optional(),
        actor: Actor,
      }),
    );
    const repo = state.requireRepo(c.req.param("owner"), c.req.param("repo"));
    const created = state.createIssue(
      repo,
      { title: body.title, body: body.body ?? null, labels: body.labels, user: body.actor },
      body.actor,
    );
    return c.json(view(c, created), 201);
  });

  app.patch("/_sim/repos/:owner/:repo/issues/:number", async (c) => {
    const body = await input(
      c,
      z.object({
        title: z.string().min(1).optional(),
        body: z.string().nullable().optional(),
        actor: Actor,
      }),
    );
    const { issue: i } = issue(c);
    state.editIssue(i, { title: body.title, body: body.body }, body.actor);
    return c.json(view(c, i));
  });

  app.post("/_sim/repos/:owner/:repo/issues/:number/close", async (c) => {
    const body = await input(
      c,
      z.object({
        stateReason: z.enum(["completed", "not_planned", "duplicate"]).default("completed"),
        actor: Actor,
      }),
    );
    const { issue: i } = issue(c);
    state.closeIssue(i, body.stateReason, body.actor);
    return c.json(view(c, i));
  });

  app.post("/_sim/repos/:owner/:repo/issues/:number/reopen", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    const { issue: i } = issue(c);
    state.reopenIssue(i, body.actor);
    return c.json(view(c, i));
  });

  app.delete("/_sim/repos/:owner/:repo/issues/:number", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    const { issue: i } = issue(c);
    state.deleteIssue(i, body.actor);
    return c.json({ deleted: true });
  });

  app.post("/_sim/repos/:owner/:repo/issues/:number/transfer", async (c) => {
    const body = await input(c, z.object({ to: z.string().regex(/^[^/]+\/[^/]+$/), actor: Actor }));
    const { issue: i } = issue(c);
    const [owner, name] = body.to.split("/") as [string, string];
    const moved = state.transferIssue(i, state.createRepo(owner, name), body.actor);
    return c.json({ to: body.to, number: moved.number });
  });

  app.post("/_sim/repos/:owner/:repo/issues/:number/labels", async (c) => {
    const body = await input(
      c,
      z.object({ labels: z.array(z.string().min(1)).min(1), actor: Actor }),
    );
    const { issue: i } = issue(c);
    state.addLabels(i, body.labels, body.actor);
    return c.json(view(c, i));
  });

  app.delete("/_sim/repos/:owner/:repo/issues/:number/labels/:name", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    const { issue: i } = issue(c);
    if (!state.removeLabel(i, c.req.param("name"), body.actor))
      throw new SimHttpError(404, "Label does not exist");
    return c.json(view(c, i));
  });

  // What a test reads back: the issue's comments, oldest first.
  app.get("/_sim/repos/:owner/:repo/issues/:number/comments", (c) => {
    const { issue: i } = issue(c);
    return c.json(
      i.comments.map((m) => ({ id: m.id, user: m.user, body: m.body, created_at: m.createdAt })),
    );
  });

  app.post("/_sim/repos/:owner/:repo/issues/:number/comments", async (c) => {
    const body = await input(c, z.object({ body: z.string().min(1), actor: Actor }));
    const { issue: i } = issue(c);
    const comment = state.addComment(i, body.body, body.actor);
    return c.json({ id: comment.id, created_at: comment.createdAt }, 201);
  });

  app.patch("/_sim/comments/:id", async (c) => {
    const body = await input(c, z.object({ body: z.string().min(1), actor: Actor }));
    const comment = state.editComment(Number(c.req.param("id")), body.body, body.actor);
    return c.json({ id: comment.id, updated_at: comment.updatedAt });
  });

  app.delete("/_sim/comments/:id", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    state.deleteComment(Number(c.req.param("id")), body.actor);
    return c.json({ deleted: true });
  });

  app.post("/_sim/repos/:owner/:repo/issues/:number/sub-issues", async (c) => {
    const body = await input(
      c,
      z.object({ child: Ref, replaceParent: z.boolean().default(false), actor: Actor }),
    );
    const { repo, issue: parent } = issue(c);
    state.addSubIssue(parent, state.resolveRef(repo, body.child), body.replaceParent, body.actor);
    return c.json(view(c, parent));
  });

  app.delete("/_sim/repos/:owner/:repo/issues/:number/sub-issues/:child", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    const { repo, issue: parent } = issue(c);
    state.removeSubIssue(
      parent,
      state.resolveRef(repo, decodeURIComponent(c.req.param("child"))),
      body.actor,
    );
    return c.json(view(c, parent));
  });

  app.post("/_sim/repos/:owner/:repo/issues/:number/blocked-by", async (c) => {
    const body = await input(c, z.object({ blocker: Ref, actor: Actor }));
    const { repo, issue: blocked } = issue(c);
    state.addBlockedBy(blocked, state.resolveRef(repo, body.blocker), body.actor);
    return c.json(view(c, blocked));
  });

  app.delete("/_sim/repos/:owner/:repo/issues/:number/blocked-by/:blocker", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    const { repo, issue: blocked } = issue(c);
    state.removeBlockedBy(
      blocked,
      state.resolveRef(repo, decodeURIComponent(c.req.param("blocker"))),
      body.actor,
    );
    return c.json(view(c, blocked));
  });

  app.patch("/_sim/repos/:owner/:repo/labels/:name", async (c) => {
    const body = await input(
      c,
      z.object({
        name: z.string().min(1).optional(),
        color: z.string().optional(),
        description: z.string().nullable().optional(),
        actor: Actor,
      }),
    );
    const repo = state.requireRepo(c.req.param("owner"), c.req.param("repo"));
    const label = state.editLabel(repo, c.req.param("name"), body, body.actor);
    return c.json({ name: label.name, color: label.color, description: label.description });
  });

  app.delete("/_sim/repos/:owner/:repo/labels/:name", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    const repo = state.requireRepo(c.req.param("owner"), c.req.param("repo"));
    state.deleteLabel(repo, c.req.param("name"), body.actor);
    return c.json({ deleted: true });
  });

  app.post("/_sim/installations", async (c) => {
    const body = await input(
      c,
      z.object({
        account: z.string().min(1),
        repositories: z.union([z.literal("all"), z.array(z.string().min(1))]).default("all"),
        id: z.number().int().positive().optional(),
        permissions: Permissions.optional(),
        actor: Actor,
      }),
    );
    const inst = state.install(body.account, body.repositories, body.actor, body.id);
    if (body.permissions) inst.permissions = { ...body.permissions };
    return c.json({ id: inst.id, account: inst.account, permissions: inst.permissions }, 201);
  });

  // What the owner granted: `{checks: "read", members: null}` grants one and revokes the other
  // (silently: GitHub announces only permissions the App asks for and the owner accepts).
  app.put("/_sim/installations/:id/permissions", async (c) => {
    const body = await input(
      c,
      z.object({ permissions: z.record(z.string().min(1), z.enum(["read", "write"]).nullable()) }),
    );
    const inst = state.requireInstallation(Number(c.req.param("id")));
    for (const [name, level] of Object.entries(body.permissions)) {
      if (level === null) delete inst.permissions[name];
      else inst.permissions[name] = level;
    }
    return c.json({ id: inst.id, permissions: inst.permissions });
  });

  app.post("/_sim/installations/:id/repositories", async (c) => {
    const body = await input(
      c,
      z.object({
        add: z.array(z.string().min(1)).default([]),
        remove: z.array(z.string().min(1)).default([]),
        actor: Actor,
      }),
    );
    const inst = state.requireInstallation(Number(c.req.param("id")));
    state.changeInstallationRepos(inst, body.add, body.remove, body.actor);
    return c.json({ id: inst.id, repositories: state.installationRepos(inst).map((r) => r.name) });
  });

  app.post("/_sim/installations/:id/suspend", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    state.setSuspended(state.requireInstallation(Number(c.req.param("id"))), true, body.actor);
    return c.json({ suspended: true });
  });

  app.post("/_sim/installations/:id/unsuspend", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    state.setSuspended(state.requireInstallation(Number(c.req.param("id"))), false, body.actor);
    return c.json({ suspended: false });
  });

  app.delete("/_sim/installations/:id", async (c) => {
    const body = await input(c, z.object({ actor: Actor }));
    const inst = state.requireInstallation(Number(c.req.param("id")));
    state.uninstall(inst, body.actor);
    sim.tokens.revokeInstallation(inst.id);
    return c.json({ deleted: true });
  });

  app.get("/_sim/counters", (c) => {
    const identities = sim.concurrency.snapshot();
    return c.json({
      ...sim.counter.snapshot(),
      secondaryRateLimited: Object.values(identities).reduce((n, i) => n + i.secondaryRefusals, 0),
      identities,
      tokensIssued: sim.tokens.issued,
      webhooksEmitted: sim.webhooks.emitted,
    });
  });
  app.post("/_sim/counters/reset", (c) => {
    sim.counter.reset();
    sim.concurrency.resetCounts();
    return c.json({ ok: true });
  });

  // What is left of the plan: a rule of `times: 1` reads 0 once its request has arrived.
  app.get("/_sim/faults", (c) => c.json(sim.faults.pending()));
  /**
   * Answers once no API request is being answered and every pushed webhook was delivered: a
   * test waits on this condition instead of the clock (delayed answers its client gave up on
   * have finished on the server).
   */
  app.get("/_sim/settled", async (c) => {
    await sim.settled();
    await sim.webhooks.settled();
    return c.json({ settled: true });
  });
  app.put("/_sim/faults", async (c) => {
    const plan = await input(c, FaultPlanSchema);
    sim.faults.set(plan);
    return c.json(sim.faults.pending());
  });
  app.post("/_sim/faults", async (c) => {
    const plan = await input(c, FaultPlanSchema);
    sim.faults.add(plan);
    return c.json(sim.faults.pending());
  });
  app.delete("/_sim/faults", (c) => {
    sim.faults.clear();
    return c.json(sim.faults.pending());
  });

  app.put("/_sim/rate-limit", async (c) => {
    const body = await input(
      c,
      z.object({
        limit: z.number().int().positive().optional(),
        remaining: z.number().int().min(0).nullable().optional(),
        installation: z
          .object({
            perRepository: z.number().int().min(0).optional(),
            perMember: z.number().int().min(0).optional(),
            included: z.number().int().min(0).optional(),
            max: z.number().int().positive().optional(),
          })
          .optional(),
        scale: z.number().positive().optional(),
        windowSeconds: z.number().int().positive().optional(),
        concurrency: z.number().int().positive().optional(),
        retryAfterSeconds: z.number().int().min(0).optional(),
      }),
    );
    const { limits, concurrency } = sim;
    if (body.limit !== undefined) limits.limit = body.limit;
    if (body.installation) Object.assign(limits.scaling, body.installation);
    if (body.scale !== undefined) limits.scale = body.scale;
    if (body.windowSeconds !== undefined) limits.windowSeconds = body.windowSeconds;
    if (body.concurrency !== undefined) concurrency.limit = body.concurrency;
    if (body.retryAfterSeconds !== undefined)
      concurrency.retryAfterSeconds = body.retryAfterSeconds;
    if (body.remaining !== undefined) limits.setRemaining(body.remaining);
    return c.json(limitsView(sim));
  });
  app.get("/_sim/rate-limit", (c) => c.json(limitsView(sim)));

  app.post("/_sim/clock", async (c) => {
    const body = await input(
      c,
      z.object({
        now: z.iso.datetime({ offset: true }).nullable().optional(),
        advanceSeconds: z.number().optional(),
      }),
    );
    sim.setClock(body);
    return c.json({ now: sim.now().toISOString() });
  });

  app.put("/_sim/config", async (c) => {
    const body = await input(
      c,
      z.object({
        webhookUrl: z.url().nullable().optional(),
        webhookSecret: z.string().min(1).optional(),
        publicUrl: z.url().optional(),
      }),
    );
    if (body.webhookUrl !== undefined) sim.webhooks.pushUrl = body.webhookUrl;
    if (body.webhookSecret !== undefined) sim.webhooks.secret = body.webhookSecret;
    if (body.publicUrl !== undefined) sim.publicUrl = body.publicUrl;
    return c.json({ webhookUrl: sim.webhooks.pushUrl, publicUrl: sim.publicUrl });
  });

  /** Takes every queued webhook delivery (headers signed, raw body) out of the outbox. */
  app.post("/_sim/outbox/drain", async (c) => {
    sim.webhooks.flushHeld();
    return c.json({ deliveries: await sim.webhooks.drain() });
  });
  app.get("/_sim/outbox", (c) =>
    c.json({
      pending: sim.webhooks.outbox.map((d) => ({ id: d.id, event: d.event, action: d.action })),
    }),
  );
  app.get("/_sim/deliveries", async (c) => {
    await sim.webhooks.settled();
    return c.json({ pushed: sim.webhooks.pushed });
  });
}
