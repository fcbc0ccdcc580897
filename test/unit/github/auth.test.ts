import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createGitHubSimulator, simulatorFetch } from "../../../infra/github-sim/app.ts";
import {
  checkAppPrivateKey,
  MemoryTokenCache,
  type TokenCache,
} from "../../../shared/github/auth.ts";
import { GitHubClient } from "../../../shared/github/client.ts";
import { GitHubApiError, GitHubConfigError } from "../../../shared/github/errors.ts";
import { fetchSnapshot } from "../../../shared/github/fetch-snapshot.ts";
import { issue, REPO, seed } from "./sim-harness.ts";

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    pkcs8: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    pkcs1: privateKey.export({ type: "pkcs1", format: "pem" }).toString(),
    spki: publicKey.export({ type: "spki", format: "pem" }).toString(),
  };
}
const KEY = keyPair();

function appSetup(
  opts: { cache?: TokenCache; privateKey?: string; clientNow?: () => number } = {},
) {
  const sim = createGitHubSimulator({ appId: 42, appPublicKey: KEY.spki });
  seed(sim, [issue(1), issue(2)]);
  const installation = sim.state.install("acme", ["app"], "octocat");
  sim.state.createRepo("acme", "secret"); // not part of the installation
  const client = (cache = opts.cache) =>
    new GitHubClient({
      auth: {
        kind: "app",
        appId: 42,
        privateKey: opts.privateKey ?? KEY.pkcs8,
        installationId: installation.id,
        cache,
      },
      baseUrl: "http://sim.test",
      fetch: simulatorFetch(sim),
      now: opts.clientNow ?? (() => Date.now()),
      sleep: async () => {},
    });
  return { sim, installation, client };
}

describe("GitHub App authentication", () => {
  it("mints an installation token with a PKCS#8-signed JWT the simulator verifies, and reuses it", async () => {
    const { sim, client } = appSetup();
    const c = client();
    const { snapshot } = await fetchSnapshot(c, REPO);
    expect(snapshot.issues).toHaveLength(2);
    await fetchSnapshot(c, REPO);
    expect(sim.tokens.issued).toBe(1);
    expect(
      sim.counter.snapshot().byEndpoint["POST /app/installations/{installation_id}/access_tokens"]
        ?.statuses,
    ).toEqual({ "201": 1 });
  });

  it("keeps tokens in a pluggable cache shared by clients (as the Worker's Durable Object would)", async () => {
    const stored = new Map<string, string>();
    const cache: TokenCache = {
      get: async (k) => stored.get(k),
      set: async (k, v) => {
        stored.set(k, v);
      },
    };
    const { sim, client } = appSetup({ cache });
    await fetchSnapshot(client(), REPO);
    await fetchSnapshot(client(), REPO);
    expect(sim.tokens.issued).toBe(1);
    expect(stored.size).toBe(1);
  });

  it("mints a fresh token when the cached one is about to expire", async () => {
    let skew = 0;
    const { sim, client } = appSetup({
      cache: new MemoryTokenCache(),
      clientNow: () => Date.now() + skew,
    });
    const c = client();
    await fetchSnapshot(c, REPO);
    skew = 54 * 60_000; // still 6 minutes left: the cached token is used
    await fetchSnapshot(c, REPO);
    expect(sim.tokens.issued).toBe(1);
    skew = 56 * 60_000; // within 5 minutes of the 1-hour expiry: a new one is minted
    await fetchSnapshot(c, REPO);
    expect(sim.tokens.issued).toBe(2);
  });

  it("mints a new token once when GitHub refuses a cached one (revoked before its expiry)", async () => {
    const stored = new Map<string, string>();
    const { sim, installation, client } = appSetup({
      cache: { get: (k) => stored.get(k), set: (k, v) => void stored.set(k, v) },
    });
    const c = client();
    await fetchSnapshot(c, REPO);
    // The token was minted earlier (say by another Worker invocation) and has since been revoked.
    for (const [k, v] of stored) {
      const parts = v.split("|");
      parts[1] = new Date(Date.now() - 10 * 60_000).toISOString();
      stored.set(k, parts.join("|"));
    }
    sim.tokens.revokeInstallation(installation.id);
    const { snapshot } = await fetchSnapshot(c, REPO);
    expect(snapshot.issues).toHaveLength(2);
    expect(sim.tokens.issued).toBe(2);
    expect(
      sim.counter.snapshot().byEndpoint["POST /graphql SwitchyardIssuesPage"]?.statuses,
    ).toEqual({ "200": 2, "401": 1 });
  });

  it("only reaches repositories the installation covers", async () => {
    const { client } = appSetup();
    const error = (await fetchSnapshot(client(), "acme/secret").catch(
      (e: unknown) => e,
    )) as GitHubApiError;
    expect(error).toBeInstanceOf(GitHubApiError);
    expect(error.kind).toBe("not-found");
  });

  it("fails with unauthorized when the JWT is signed by another key", async () => {
    const other = keyPair();
    const { client } = appSetup({ privateKey: other.pkcs8 });
    const error = (await fetchSnapshot(client(), REPO).catch((e: unknown) => e)) as GitHubApiError;
    expect(error).toBeInstanceOf(GitHubApiError);
    expect(error.kind).toBe("unauthorized");
    expect(error.reason).toMatch(/signature/);
  });

  it("rejects a PKCS#1 key up front with a message naming the conversion", () => {
    expect(() => appSetup({ privateKey: KEY.pkcs1 }).client()).toThrow(GitHubConfigError);
    expect(() => checkAppPrivateKey(KEY.pkcs1)).toThrow(/PKCS#1.*openssl pkcs8 -topk8/);
  });

  it("accepts a PKCS#8 key whose newlines arrive escaped (as from an env file)", () => {
    const escaped = KEY.pkcs8.replace(/\n/g, "\\n");
    expect(checkAppPrivateKey(escaped)).toBe(KEY.pkcs8);
    expect(() => checkAppPrivateKey("not a key")).toThrow(/PKCS#8/);
  });

  it("never puts the token into an error message", async () => {
    const { sim, client } = appSetup();
    const c = client();
    await fetchSnapshot(c, REPO);
    sim.faults.set({
      requests: [
        {
          path: "/graphql",
          status: 403,
          body: { message: "Resource not accessible by integration" },
        },
      ],
    });
    const error = (await fetchSnapshot(c, REPO).catch((e: unknown) => e)) as GitHubApiError;
    expect(error.kind).toBe("forbidden");
    expect(`${error.message} ${JSON.stringify(error)}`).not.toMatch(/ghs_/);
  });

  it("rejects a plain token the simulator does not know", async () => {
    const sim = createGitHubSimulator({ userTokens: ["good"] });
    seed(sim, [issue(1)]);
    const client = new GitHubClient({
      auth: { kind: "token", token: "bad" },
      baseUrl: "http://sim.test",
      fetch: simulatorFetch(sim),
    });
    const error = (await fetchSnapshot(client, REPO).catch((e: unknown) => e)) as GitHubApiError;
    expect(error).toMatchObject({ kind: "unauthorized", status: 401, attempts: 1 });
  });
});
