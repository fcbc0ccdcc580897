// GitHub Actions' OpenID Connect issuer, simulated: discovery and JWKS under `/oidc` (the issuer
// URL is `{origin}/oidc`), ID tokens minted through the control API, and the token request
// endpoint a workflow step calls (`ACTIONS_ID_TOKEN_REQUEST_URL`). RS256 keys are made with
// WebCrypto on first use and kept for the simulator's lifetime (a reset keeps them), so the
// simulator stays Web-standard and runs in workerd as well as Node.
import type { Context } from "hono";
import { z } from "zod";
import type { GitHubSimulator } from "./app.ts";
import { input, RepoName } from "./control.ts";
import { accountId, DEFAULT_BRANCH, fullName, isoSeconds, type SimRepo } from "./model.ts";
import { SimHttpError } from "./state.ts";

/** The claims GitHub's discovery document lists for Actions ID tokens. */
const CLAIMS_SUPPORTED = [
  "sub",
  "aud",
  "exp",
  "iat",
  "iss",
  "jti",
  "nbf",
  "ref",
  "sha",
  "repository",
  "repository_id",
  "repository_owner",
  "repository_owner_id",
  "run_id",
  "run_number",
  "run_attempt",
  "actor",
  "actor_id",
  "workflow",
  "workflow_ref",
  "workflow_sha",
  "head_ref",
  "base_ref",
  "event_name",
  "ref_type",
  "ref_protected",
  "job_workflow_ref",
  "job_workflow_sha",
  "repository_visibility",
  "runner_environment",
];

/** Lifetime of a token from the request endpoint (GitHub's: five minutes). */
const REQUEST_TOKEN_SECONDS = 300;

export type OidcSigner = "issuer" | "foreign";

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  /** The public key as published: `{kty, n, e, kid, alg, use}`. */
  jwk: { kty: string; n: string; e: string; kid: string; alg: "RS256"; use: "sig" };
}

function base64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function base64UrlJson(value: unknown): string {
  return base64Url(new TextEncoder().encode(JSON.stringify(value)));
}

async function generateSigningKey(): Promise<SigningKey> {
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
  const exported = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
  const n = exported.n!;
  const e = exported.e!;
  // RFC 7638 thumbprint: SHA-256 of the required members in lexicographic order.
  const thumbprint = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(JSON.stringify({ e, kty: "RSA", n })),
  );
  const kid = base64Url(new Uint8Array(thumbprint));
  return {
    kid,
    privateKey: pair.privateKey,
    jwk: { kty: "RSA", n, e, kid, alg: "RS256", use: "sig" },
  };
}

export interface MintOptions {
  /** The issuer URL, `{origin}/oidc`. */
  issuer: string;
  repo: SimRepo;
  aud: string;
  now: Date;
  expiresInSeconds: number;
  signWith: OidcSigner;
  /** Extra claims; they override the standard ones. */
  claims?: Record<string, unknown>;
}

export class OidcIssuer {
  private keyPairs: Promise<Record<OidcSigner, SigningKey>> | null = null;
  /** Request tokens (`ACTIONS_ID_TOKEN_REQUEST_TOKEN`) → lower-cased `owner/name`. */
  private requestTokens = new Map<string, string>();
  private runs = 0;

  /** The issuer's key and a foreign one (not published), generated once, on first use. */
  keys(): Promise<Record<OidcSigner, SigningKey>> {
    this.keyPairs ??= Promise.all([generateSigningKey(), generateSigningKey()]).then(
      ([issuer, foreign]) => ({ issuer, foreign }),
    );
    return this.keyPairs;
  }

  async jwks(): Promise<{ keys: SigningKey["jwk"][] }> {
    return { keys: [(await this.keys()).issuer.jwk] };
  }

  discovery(issuer: string) {
    return {
      issuer,
      jwks_uri: `${issuer}/.well-known/jwks`,
      subject_types_supported: ["public", "pairwise"],
      response_types_supported: ["id_token"],
      claims_supported: [...CLAIMS_SUPPORTED],
      id_token_signing_alg_values_supported: ["RS256"],
      scopes_supported: ["openid"],
    };
  }

  /** An Actions ID token for a push workflow on the default branch of `repo`. */
  async mint(opts: MintOptions): Promise<{ token: string; expiresAt: string }> {
    const key = (await this.keys())[opts.signWith];
    const name = fullName(opts.repo);
    const ref = `refs/heads/${DEFAULT_BRANCH}`;
    const sha = opts.repo.head ?? "0".repeat(40);
    const actor = "octocat";
    const workflowRef = `${name}/.github/workflows/ci.yml@${ref}`;
    const iat = Math.floor(opts.now.getTime() / 1000);
    const exp = iat + Math.trunc(opts.expiresInSeconds);
    this.runs += 1;
    // As GitHub sends them: every claim but the registered ones is a string.
    const claims: Record<string, unknown> = {
      jti: crypto.randomUUID(),
      sub: `repo:${name}:ref:${ref}`,
      aud: opts.aud,
      ref,
      sha,
      repository: name,
      repository_owner: opts.repo.owner,
      repository_owner_id: String(opts.repo.ownerId),
      run_id: String(9_000_000_000 + this.runs),
      run_number: String(this.runs),
      run_attempt: "1",
      repository_visibility: "private",
      repository_id: String(opts.repo.id),
      actor_id: String(accountId(actor)),
      actor,
      workflow: "CI",
      head_ref: "",
      base_ref: "",
      event_name: "push",
      ref_protected: "false",
      ref_type: "branch",
      workflow_ref: workflowRef,
      workflow_sha: sha,
      job_workflow_ref: workflowRef,
      job_workflow_sha: sha,
      runner_environment: "github-hosted",
      iss: opts.issuer,
      nbf: iat,
      exp,
      iat,
      ...(opts.claims ?? {}),
    };
    const signingInput = `${base64UrlJson({ alg: "RS256", typ: "JWT", kid: key.kid })}.${base64UrlJson(claims)}`;
    const signature = await crypto.subtle.sign(
      "RSASSA-PKCS1-v1_5",
      key.privateKey,
      new TextEncoder().encode(signingInput),
    );
    return {
      token: `${signingInput}.${base64Url(new Uint8Array(signature))}`,
      expiresAt: isoSeconds(new Date(exp * 1000)),
    };
  }

  registerRequestToken(token: string, repo: SimRepo): void {
    this.requestTokens.set(token, fullName(repo).toLowerCase());
  }

  requestTokenRepo(token: string): string | undefined {
    return this.requestTokens.get(token);
  }

  /** Forgets request tokens; the signing keys stay. */
  reset(): void {
    this.requestTokens.clear();
    this.runs = 0;
  }
}

export function registerOidcRoutes(sim: GitHubSimulator): void {
  const { app, state, oidc } = sim;
  const issuerOf = (c: Context) => `${new URL(c.req.url).origin}/oidc`;
  const repoNamed = (name: string) => {
    const [owner, repo] = name.split("/") as [string, string];
    return state.requireRepo(owner, repo);
  };

  app.get("/oidc/.well-known/openid-configuration", (c) => c.json(oidc.discovery(issuerOf(c))));
  app.get("/oidc/.well-known/jwks", async (c) => c.json(await oidc.jwks()));

  app.post("/_sim/oidc/token", async (c) => {
    const body = await input(
      c,
      z.object({
        repository: RepoName,
        aud: z.string().min(1),
        expiresInSeconds: z.number().int().default(300),
        signWith: z.enum(["issuer", "foreign"]).default("issuer"),
        claims: z.record(z.string(), z.unknown()).optional(),
      }),
    );
    const minted = await oidc.mint({
      issuer: issuerOf(c),
      repo: repoNamed(body.repository),
      aud: body.aud,
      now: sim.now(),
      expiresInSeconds: body.expiresInSeconds,
      signWith: body.signWith,
      claims: body.claims,
    });
    return c.json(minted, 201);
  });

  app.post("/_sim/oidc/request-tokens", async (c) => {
    const body = await input(c, z.object({ repository: RepoName, token: z.string().min(1) }));
    const repo = repoNamed(body.repository);
    oidc.registerRequestToken(body.token, repo);
    return c.json({ repository: fullName(repo) }, 201);
  });

  /** What `ACTIONS_ID_TOKEN_REQUEST_URL` answers a step holding the request token. */
  app.get("/_sim/oidc/request", async (c) => {
    const m = /^(?:bearer|token)\s+(\S+)$/i.exec((c.req.header("authorization") ?? "").trim());
    const name = m ? oidc.requestTokenRepo(m[1]!) : undefined;
    if (name === undefined) throw new SimHttpError(401, "Bad credentials");
    const repo = repoNamed(name);
    // Without `audience`, GitHub uses the URL of the repository owner.
    const origin = new URL(c.req.url).origin;
    const aud = c.req.query("audience") || `${origin}/${repo.owner}`;
    const { token } = await oidc.mint({
      issuer: issuerOf(c),
      repo,
      aud,
      now: sim.now(),
      expiresInSeconds: REQUEST_TOKEN_SECONDS,
      signWith: "issuer",
    });
    return c.json({ value: token });
  });
}
