// The GitHub App manifest switchyard registers itself with (the manifest flow of `npm run setup`):
// what the App subscribes to, what it may do, and where GitHub sends webhooks and users. Pure and
// Web-standard, so the setup CLI builds manifests and the GitHub simulator checks them with the
// same schema.
import { z } from "zod";
import { WEBHOOK_SCHEMAS } from "../../shared/github/webhooks.ts";

/** GitHub sends these to every App, subscribed or not; a manifest may not list them. */
export const EVENTS_EVERY_APP_RECEIVES = ["installation", "installation_repositories"] as const;

/**
 * The events the App subscribes to: every event the webhook ingress handles (the keys of
 * `WEBHOOK_SCHEMAS`, the ingress's own table) except the two every App receives anyway. Derived,
 * so a newly handled event is subscribed to without a second list to keep in step.
 */
export const MANIFEST_EVENTS: readonly string[] = Object.keys(WEBHOOK_SCHEMAS).filter(
  (event) => !(EVENTS_EVERY_APP_RECEIVES as readonly string[]).includes(event),
);

/**
 * Issues: write for labels, comments, sub-issues and dependencies (and the issue events);
 * contents: read for `.github/switchyard.yml` (and `push`); metadata: read for repositories.
 * The queue policy (docs/operations.md): checks, statuses and actions: read for the circuit
 * breaker (`check_run`/`check_suite`, `status`, `workflow_run` and their reads), and the
 * organization permission organization_projects: read for a Projects (v2) priority field
 * (`projects_v2_item`). Without one of them that feature is off and says why.
 */
export const MANIFEST_PERMISSIONS = {
  issues: "write",
  metadata: "read",
  contents: "read",
  checks: "read",
  statuses: "read",
  actions: "read",
  organization_projects: "read",
  /** Organization members: who is an active owner (owner keys of the org queue). */
  members: "read",
} as const;

/** The Worker's webhook route (functions/routes/webhooks.ts). */
export const WEBHOOK_PATH = "/webhooks/github";
/** Where GitHub sends a user back after the status page's login (the OAuth web flow). */
export const LOGIN_CALLBACK_PATH = "/login/callback";

const httpUrl = z
  .url({ protocol: /^https?$/, message: "expected an http(s) URL" })
  .refine((u) => !u.includes("#"), "expected a URL without a fragment");

/** GitHub's manifest parameters (the subset GitHub documents; unknown keys are refused). */
export const AppManifestSchema = z.strictObject({
  name: z.string().min(1).max(34, "GitHub App names have at most 34 characters"),
  url: httpUrl,
  description: z.string().optional(),
  hook_attributes: z.strictObject({ url: httpUrl, active: z.boolean().optional() }),
  redirect_url: httpUrl,
  callback_urls: z.array(httpUrl).max(10).optional(),
  setup_url: httpUrl.optional(),
  public: z.boolean().optional(),
  default_permissions: z.record(z.string(), z.enum(["read", "write"])),
  default_events: z
    .array(z.string().min(1))
    .refine(
      (events) => !events.some((e) => (EVENTS_EVERY_APP_RECEIVES as readonly string[]).includes(e)),
      "installation and installation_repositories are sent to every App and may not be listed",
    ),
  request_oauth_on_install: z.boolean().optional(),
  setup_on_update: z.boolean().optional(),
});
export type AppManifest = z.infer<typeof AppManifestSchema>;

/** What `POST /app-manifests/{code}/conversions` answers: the App and its credentials. */
export const ManifestConversionSchema = z.object({
  id: z.number().int().positive(),
  slug: z.string().min(1).optional(),
  name: z.string().min(1),
  html_url: z.url(),
  client_id: z.string().min(1),
  client_secret: z.string().min(1),
  webhook_secret: z.string().min(1).nullable(),
  pem: z.string().includes("PRIVATE KEY", { message: "expected a PEM private key" }),
});
export type ManifestConversion = z.infer<typeof ManifestConversionSchema>;

/** A Worker URL without trailing slashes: `https://switchyard.acme.workers.dev`. */
export function normalizeWorkerUrl(url: string): string {
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`;
}

export interface ManifestInput {
  name: string;
  /** The deployed Worker's public URL. */
  workerUrl: string;
  /** Where GitHub sends the browser with the code: the setup's local server. */
  redirectUrl: string;
}

/** The manifest for one deployed Worker. */
export function buildManifest(input: ManifestInput): AppManifest {
  const worker = normalizeWorkerUrl(input.workerUrl);
  return AppManifestSchema.parse({
    name: input.name,
    url: `${worker}/`,
    description:
      "Keeps the issue graph current and hands out claimable, fenced work to AI agent fleets (switchyard).",
    hook_attributes: { url: `${worker}${WEBHOOK_PATH}`, active: true },
    redirect_url: input.redirectUrl,
    callback_urls: [`${worker}${LOGIN_CALLBACK_PATH}`],
    // After an installation GitHub sends the user to the status page.
    setup_url: `${worker}/`,
    public: false,
    default_permissions: { ...MANIFEST_PERMISSIONS },
    default_events: [...MANIFEST_EVENTS],
    request_oauth_on_install: false,
  });
}

/**
 * GitHub's web origin for an API URL: `https://api.github.com` → `https://github.com`; GitHub
 * Enterprise Server's `https://HOST/api/v3` → `https://HOST`; anything else (the simulator)
 * serves both at one origin.
 */
export function githubWebUrl(apiUrl: string): string {
  const url = new URL(apiUrl);
  if (url.hostname === "api.github.com") return "https://github.com";
  const path = url.pathname.replace(/\/+$/, "");
  const web = path.endsWith("/api/v3") ? path.slice(0, -"/api/v3".length) : path;
  return `${url.origin}${web}`;
}

/** Where the manifest form posts: the account's, or an organization's, new-App page. */
export function manifestFormTarget(webUrl: string, state: string, org?: string): string {
  const path = org
    ? `/organizations/${encodeURIComponent(org)}/settings/apps/new`
    : "/settings/apps/new";
  return `${webUrl}${path}?state=${encodeURIComponent(state)}`;
}

/**
 * A default App name likely to be free (App names are unique across GitHub): from the Worker's
 * host, `switchyard.acme.workers.dev` → `switchyard-acme`. GitHub's form lets the user change it.
 */
export function defaultAppName(workerUrl: string): string {
  const host = new URL(workerUrl).hostname;
  if (host === "localhost" || /^[\d.]+$|^\[/.test(host)) return "switchyard";
  const labels = host.split(".");
  const picked =
    labels.length >= 4 && labels.slice(-2).join(".") === "workers.dev"
      ? labels.slice(0, 2)
      : labels.slice(0, 1);
  const name = picked
    .join("-")
    .replace(/[^A-Za-z0-9-]+/g, "-")
    .slice(0, 34);
  return /^[A-Za-z0-9]/.test(name) ? name : "switchyard";
}
