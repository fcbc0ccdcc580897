// Webhook emission: payloads rendered at the moment of the change, signed with the configured
// secret, queued in an outbox tests can drain, and optionally pushed to a URL (the local demo).
import type { FaultPlan } from "./faults.ts";
import {
  fullName,
  type SimComment,
  type SimCommit,
  type SimInstallation,
  type SimIssue,
  type SimLabel,
  type SimRepo,
} from "./model.ts";
import { EVENT_PERMISSIONS, hasPermission } from "./permissions.ts";
import {
  type RenderContext,
  renderComment,
  renderInstallation,
  renderIssue,
  renderLabel,
  renderOrganization,
  renderPushCommit,
  renderPusher,
  renderPushRepository,
  renderRepo,
  renderUser,
} from "./render.ts";
import type { SimEvent, SimState } from "./state.ts";

export interface Delivery {
  id: string;
  event: string;
  /** The payload's `action`; empty for events without one (`push`). */
  action: string;
  /** The raw JSON body, exactly as signed and sent. */
  body: string;
  headers: Record<string, string>;
}

export interface PushResult {
  id: string;
  event: string;
  action: string;
  status: number | null;
  error: string | null;
  /** When the receiver answered (or the push failed), by `performance.now()` of this process. */
  answeredAtMs: number;
}

export async function signWebhook(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body));
  return `sha256=${[...new Uint8Array(mac)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

const ISSUE_KEYS = new Set([
  "issue",
  "sub_issue",
  "parent_issue",
  "blocked_issue",
  "blocking_issue",
  "new_issue",
]);
const REPO_KEYS = new Set([
  "sub_issue_repo",
  "parent_issue_repo",
  "blocking_issue_repo",
  "blocked_issue_repo",
  "new_repository",
]);
const REPO_LIST_KEYS = new Set(["repositories", "repositories_added", "repositories_removed"]);

function shortRepo(repo: SimRepo) {
  return {
    id: repo.id,
    node_id: repo.nodeId,
    name: repo.name,
    full_name: `${repo.owner}/${repo.name}`,
    private: repo.private,
  };
}

export class WebhookEmitter {
  secret: string;
  pushUrl: string | null = null;
  outbox: Delivery[] = [];
  pushed: PushResult[] = [];
  emitted = 0;
  private held: Delivery[] = [];
  private pushChain: Promise<void> = Promise.resolve();
  private readonly state: SimState;
  private readonly faults: FaultPlan;
  private readonly ctx: () => RenderContext;
  private readonly fetchFn: typeof fetch;

  constructor(opts: {
    state: SimState;
    faults: FaultPlan;
    secret: string;
    ctx: () => RenderContext;
    fetch?: typeof fetch;
  }) {
    this.state = opts.state;
    this.faults = opts.faults;
    this.secret = opts.secret;
    this.ctx = opts.ctx;
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
  }

  private render(ctx: RenderContext, repo: SimRepo | null, key: string, value: unknown): unknown {
    if (ISSUE_KEYS.has(key)) return renderIssue(ctx, value as SimIssue);
    if (REPO_KEYS.has(key)) return renderRepo(ctx.base, value as SimRepo);
    if (REPO_LIST_KEYS.has(key)) return (value as SimRepo[]).map(shortRepo);
    if (key === "label" && repo) return renderLabel(ctx.base, repo, value as SimLabel);
    if (key === "installation") return renderInstallation(ctx, value as SimInstallation);
    if (repo && key === "commits")
      return (value as SimCommit[]).map((c) => renderPushCommit(ctx.base, repo, c));
    if (repo && key === "head_commit")
      return value === null ? null : renderPushCommit(ctx.base, repo, value as SimCommit);
    if (key === "pusher") return renderPusher(value as string);
    if (repo && key === "compare") {
      const { before, after } = value as { before: string; after: string };
      return `${ctx.base}/${fullName(repo)}/compare/${before.slice(0, 12)}...${after.slice(0, 12)}`;
    }
    if (key === "changes" && value && typeof value === "object") {
      return Object.fromEntries(
        Object.entries(value).map(([k, v]) => [
          k,
          ISSUE_KEYS.has(k) || REPO_KEYS.has(k) ? this.render(ctx, repo, k, v) : v,
        ]),
      );
    }
    return value;
  }

  /** Called synchronously by SimState for every change, so the payload shows that moment. */
  handle(event: SimEvent): void {
    const installation =
      event.installation ?? (event.repo ? this.state.installationFor(event.repo) : undefined);
    if (!installation) return; // GitHub only tells the App about repositories it is installed on.
    if (installation.suspendedAt && event.event !== "installation") return;
    // GitHub delivers an event only to installations granted the permission it belongs to.
    const needed = EVENT_PERMISSIONS[event.event];
    if (needed && !hasPermission(installation, needed)) return;
    const ctx = this.ctx();
    const raw = event.body(ctx.base);
    const payload: Record<string, unknown> = event.action === "" ? {} : { action: event.action };
    for (const [key, value] of Object.entries(raw)) {
      if (key === "comment") {
        payload.comment = renderComment(ctx, raw.issue as SimIssue, value as SimComment);
      } else {
        payload[key] = this.render(ctx, event.repo, key, value);
      }
    }
    if (event.repo)
      payload.repository =
        event.event === "push"
          ? renderPushRepository(ctx.base, event.repo)
          : renderRepo(ctx.base, event.repo);
    const owner = event.repo?.owner ?? installation.account;
    payload.organization = renderOrganization(ctx.base, owner);
    if (event.event === "installation_repositories") payload.requester = null;
    if (!("installation" in payload)) {
      payload.installation = {
        id: installation.id,
        node_id: `MDIz${btoa(String(installation.id))}`,
      };
    }
    payload.sender = renderUser(
      ctx.base,
      event.sender,
      event.sender.endsWith("[bot]") ? "Bot" : "User",
    );
    this.enqueue(event.event, event.action, JSON.stringify(payload));
  }

  private enqueue(event: string, action: string, body: string): void {
    this.emitted += 1;
    const delivery: Delivery = {
      id: crypto.randomUUID(),
      event,
      action,
      body,
      headers: {
        "content-type": "application/json",
        "user-agent": "GitHub-Hookshot/switchyard-sim",
        "x-github-event": event,
        "x-github-hook-id": "1",
        "x-github-hook-installation-target-id": String(this.ctx().appId),
        "x-github-hook-installation-target-type": "integration",
      },
    };
    delivery.headers["x-github-delivery"] = delivery.id;
    const fault = this.faults.takeWebhookFault(event, action);
    if (fault?.kind === "drop") return;
    if (fault?.kind === "reorder") {
      this.held.push(delivery);
      return;
    }
    this.release(delivery);
    if (fault?.kind === "duplicate") this.release(delivery);
    // Held (reordered) deliveries go out right after the next one.
    const held = this.held.splice(0);
    for (const h of held) this.release(h);
  }

  private release(delivery: Delivery): void {
    this.outbox.push(delivery);
    if (this.pushUrl) {
      const url = this.pushUrl;
      this.pushChain = this.pushChain.then(() => this.push(url, delivery));
    }
  }

  private async push(url: string, delivery: Delivery): Promise<void> {
    const result: PushResult = {
      id: delivery.id,
      event: delivery.event,
      action: delivery.action,
      status: null,
      error: null,
      answeredAtMs: 0,
    };
    try {
      const headers = {
        ...delivery.headers,
        "x-hub-signature-256": await signWebhook(this.secret, delivery.body),
      };
      const res = await this.fetchFn(url, { method: "POST", headers, body: delivery.body });
      await res.arrayBuffer().catch(() => undefined);
      result.status = res.status;
    } catch (error) {
      result.error = error instanceof Error ? error.message : String(error);
    }
    result.answeredAtMs = performance.now();
    this.pushed.push(result);
  }

  /** Resolves when every push queued so far has been attempted. */
  async settled(): Promise<void> {
    await this.pushChain;
  }

  /** Takes every queued delivery (signed) out of the outbox, oldest first. */
  async drain(): Promise<(Delivery & { headers: Record<string, string> })[]> {
    const items = this.outbox.splice(0);
    return Promise.all(
      items.map(async (d) => ({
        ...d,
        headers: { ...d.headers, "x-hub-signature-256": await signWebhook(this.secret, d.body) },
      })),
    );
  }

  /** Releases deliveries held back by a `reorder` fault with nothing after them. */
  flushHeld(): void {
    for (const h of this.held.splice(0)) this.release(h);
  }

  reset(): void {
    this.outbox = [];
    this.pushed = [];
    this.held = [];
    this.emitted = 0;
  }
}
