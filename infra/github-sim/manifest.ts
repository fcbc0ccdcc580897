// The GitHub App manifest flow (what `npm run setup` drives): the new-App page a manifest form
// posts to, which sends the browser back to the manifest's `redirect_url` with a one-time code,
// and `POST /app-manifests/{code}/conversions`, which trades the code for the App and its
// credentials. The simulator hosts one App, so a conversion re-creates that App: same id and
// slug, the manifest's name, permissions and events, and fresh credentials the simulator uses
// from then on (App JWTs are verified against the new key, webhooks are signed with the new
// secret and pushed to the manifest's webhook URL). Web-standard, like the rest of the simulator.
import type { Context } from "hono";
import { firstIssue } from "../../shared/validation.ts";
import { type AppManifest, AppManifestSchema } from "../install/manifest.ts";
import type { GitHubSimulator } from "./app.ts";
import { nodeId } from "./model.ts";
import { renderUser } from "./render.ts";

/** GitHub's manifest codes expire after an hour. */
const CODE_TTL_MS = 60 * 60_000;
const CONVERSION = "POST /app-manifests/{code}/conversions";

interface PendingManifest {
  manifest: AppManifest;
  owner: { login: string; type: "User" | "Organization" };
  issuedMs: number;
}

/** The credentials of the App the last conversion created (OAuth routes may check them). */
export interface ConvertedApp {
  id: number;
  clientId: string;
  clientSecret: string;
  webhookSecret: string;
  manifest: AppManifest;
}

const convertedBySim = new WeakMap<GitHubSimulator, ConvertedApp>();

export function convertedApp(sim: GitHubSimulator): ConvertedApp | undefined {
  return convertedBySim.get(sim);
}

function randomHex(bytes: number): string {
  return [...crypto.getRandomValues(new Uint8Array(bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

function pem(label: string, der: Uint8Array): string {
  let bin = "";
  for (const b of der) bin += String.fromCharCode(b);
  const lines = btoa(bin).match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

/** One DER element at `offset`: where its content starts and ends. */
function derElement(der: Uint8Array, offset: number): { tag: number; start: number; end: number } {
  const tag = der[offset]!;
  let length = der[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + der[start + i]!;
    start += count;
  }
  return { tag, start, end: start + length };
}

/**
 * The PKCS#1 `RSAPrivateKey` inside a PKCS#8 `PrivateKeyInfo` (SEQUENCE { version,
 * algorithm, OCTET STRING { RSAPrivateKey } }): WebCrypto exports only PKCS#8, GitHub hands out
 * PKCS#1.
 */
function pkcs1FromPkcs8(pkcs8: Uint8Array): Uint8Array {
  const info = derElement(pkcs8, 0);
  const version = derElement(pkcs8, info.start);
  const algorithm = derElement(pkcs8, version.end);
  const key = derElement(pkcs8, algorithm.end);
  if (info.tag !== 0x30 || version.tag !== 0x02 || algorithm.tag !== 0x30 || key.tag !== 0x04) {
    throw new Error("unexpected PKCS#8 structure");
  }
  return pkcs8.slice(key.start, key.end);
}

/** A fresh RSA App key: the PKCS#1 PEM GitHub hands out, and its public half as SPKI PEM. */
async function newAppKey(): Promise<{ pkcs1Pem: string; spkiPem: string }> {
  // Workers' types widen these results (JWK, single keys); RSA pairs in pkcs8/spki are buffers.
  const pair = (await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  )) as CryptoKeyPair;
  const pkcs8 = new Uint8Array(
    (await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer,
  );
  const spki = new Uint8Array(
    (await crypto.subtle.exportKey("spki", pair.publicKey)) as ArrayBuffer,
  );
  return {
    pkcs1Pem: pem("RSA PRIVATE KEY", pkcs1FromPkcs8(pkcs8)),
    spkiPem: pem("PUBLIC KEY", spki),
  };
}

function formError(c: Context, message: string) {
  // GitHub shows an error page on its site; the simulator says what was wrong in plain text.
  return c.text(`Invalid GitHub App manifest: ${message}`, 422);
}

export function registerManifestRoutes(sim: GitHubSimulator): void {
  const pending = new Map<string, PendingManifest>();

  // The new-App page: GitHub asks the signed-in user to confirm; the simulator confirms at once.
  const newApp = async (c: Context, owner: PendingManifest["owner"]) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const raw = form.manifest;
    if (typeof raw !== "string") return formError(c, "the form has no manifest field");
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return formError(c, "the manifest is not JSON");
    }
    const parsed = AppManifestSchema.safeParse(json);
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return formError(c, `${issue.path}: ${issue.message}`);
    }
    const code = randomHex(20);
    pending.set(code, { manifest: parsed.data, owner, issuedMs: sim.now().getTime() });
    const back = new URL(parsed.data.redirect_url);
    back.searchParams.set("code", code);
    const state = c.req.query("state");
    if (state !== undefined) back.searchParams.set("state", state);
    return c.redirect(back.toString(), 302);
  };
  sim.app.post("/settings/apps/new", (c) => newApp(c, { login: "octocat", type: "User" }));
  sim.app.post("/organizations/:org/settings/apps/new", (c) =>
    newApp(c, { login: c.req.param("org"), type: "Organization" }),
  );

  // Unauthenticated, as on GitHub: the code is the credential, good once, for an hour.
  sim.app.post("/app-manifests/:code/conversions", async (c) => {
    const code = c.req.param("code");
    const entry = pending.get(code);
    pending.delete(code);
    if (!entry || sim.now().getTime() - entry.issuedMs > CODE_TTL_MS) {
      sim.counter.record(CONVERSION, 404, false);
      return c.json(
        {
          message: "Not Found",
          documentation_url:
            "https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest",
          status: "404",
        },
        404,
      );
    }
    const { manifest, owner } = entry;
    const key = await newAppKey();
    const app: ConvertedApp = {
      id: sim.appId,
      clientId: `Iv1.sim${sim.appId}`,
      clientSecret: randomHex(20),
      webhookSecret: randomHex(20),
      manifest,
    };
    sim.setAppPublicKey(key.spkiPem);
    sim.webhooks.secret = app.webhookSecret;
    sim.webhooks.pushUrl =
      manifest.hook_attributes.active === false ? null : manifest.hook_attributes.url;
    convertedBySim.set(sim, app);
    const base = new URL(c.req.url).origin;
    const now = sim
      .now()
      .toISOString()
      .replace(/\.\d{3}Z$/, "Z");
    sim.counter.record(CONVERSION, 201, false);
    return c.json(
      {
        id: app.id,
        slug: sim.appSlug,
        node_id: nodeId("A", app.id),
        client_id: app.clientId,
        owner: renderUser(base, owner.login, owner.type),
        name: manifest.name,
        description: manifest.description ?? null,
        external_url: manifest.url,
        html_url: `${base}/apps/${sim.appSlug}`,
        created_at: now,
        updated_at: now,
        permissions: { ...manifest.default_permissions },
        events: [...manifest.default_events],
        client_secret: app.clientSecret,
        webhook_secret: app.webhookSecret,
        pem: key.pkcs1Pem,
      },
      201,
    );
  });
}
