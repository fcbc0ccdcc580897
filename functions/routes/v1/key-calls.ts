// A fleet key's `/v1` request in one Durable Object call (issue 21 item 5). Once a name's
// directory entry is known, a key request of that name is not looked up nor verified apart: the
// route's own call to the RepoObject goes through `callWithKey`, which verifies the key and
// checks the name and installation against the object's own identity before the operation
// (shared/auth/keys.ts `keyCallVerdict`). So the name → entry map below, kept a short while in
// this isolate's memory, can be stale without misrouting: the object refuses what is no longer
// its own, and a refusal makes the Worker forget the entry.
import type { AuthFailure, RepoEntry } from "../../../shared/auth/access.ts";
import { TtlCache } from "../../../shared/auth/ttl-cache.ts";
import type { Env } from "../../env.ts";
import type { KeyCallAnswer } from "../../objects/repo/repo-object.ts";

/** How long a name's entry is remembered for key requests. */
export const KEY_ROUTE_TTL_MS = 30_000;

const names = new TtlCache<RepoEntry>(10_000);
const nameKey = (fullName: string) => fullName.toLowerCase();

/** The remembered entry of `fullName` (only installed repositories are remembered). */
export function rememberedName(fullName: string): RepoEntry | undefined {
  return names.get(nameKey(fullName));
}

/** Remembers what the directory said of `fullName`, after a key request proved it the slow way. */
export function rememberName(fullName: string, entry: RepoEntry): void {
  if (entry.status === "removed") return;
  names.set(nameKey(fullName), entry, KEY_ROUTE_TTL_MS);
}

function forgetName(fullName: string): void {
  names.delete(nameKey(fullName));
}

/** The RepoObject refused a key's call: the route's answer is this refusal. */
export class KeyCallRefused extends Error {
  override name = "KeyCallRefused";
  readonly failure: AuthFailure;
  constructor(failure: AuthFailure) {
    super(failure.message);
    this.failure = failure;
  }
}

function refusal(answer: Extract<KeyCallAnswer, { ok: false }>): AuthFailure {
  if (answer.status === 401)
    return { ok: false, status: 401, error: "unauthorized", message: answer.message };
  if (answer.status === 403)
    return { ok: false, status: 403, error: "forbidden", message: answer.message };
  return {
    ok: false,
    status: 503,
    error: "unavailable",
    message: answer.message,
    retryAfterSeconds: 1,
  };
}

type Call = { hash: string; fullName: string; installationId: number };
type KeyedStub = {
  callWithKey(call: Call, method: string, args: unknown[]): Promise<KeyCallAnswer>;
};

/**
 * A stub whose every method call is `callWithKey(call, method, args)`: the answer's value, or a
 * KeyCallRefused thrown (the route does not go on; `app.onError` answers the refusal).
 */
function keyedStub<T extends object>(stub: T, call: Call, judged: () => void): T {
  return new Proxy(stub, {
    get(target, property) {
      if (property === "then" || typeof property !== "string") return undefined;
      if (property === "id" || property === "name") return Reflect.get(target, property);
      return async (...args: unknown[]) => {
        const answer = await (target as unknown as KeyedStub).callWithKey(call, property, args);
        judged();
        if (answer.ok) return answer.value;
        forgetName(call.fullName);
        throw new KeyCallRefused(refusal(answer));
      };
    },
  });
}

/**
 * The request's bindings with the RepoObject namespace keyed: the route code stays the same
 * (`repoObject(c.env, id).claim(...)`), and each of its calls carries the key's proof.
 * `judged()`: whether a RepoObject has answered on the key (accepted or refused) yet.
 */
export function keyedEnv(env: Env, call: Call): { env: Env; judged(): boolean } {
  const repo = env.REPO;
  let judged = false;
  const keyed = {
    idFromName: (name: string) => repo.idFromName(name),
    get: (id: DurableObjectId) =>
      keyedStub(repo.get(id), call, () => {
        judged = true;
      }),
  } as unknown as Env["REPO"];
  return { env: { ...env, REPO: keyed }, judged: () => judged };
}
