// An owner key on a repository route (`/v1/repos/{owner}/{repo}/...`): a grant of the org queue
// is heartbeated, released and written through on its repository's routes, so an owner key is
// accepted there for every repository of its installation, and for no other. Kept apart from
// auth.ts (the repository keys' rules are changed there by other work); auth.ts calls this for
// a token of the owner-key shape.
import { forbidden, notInstalled, unauthorized } from "../../../shared/auth/access.ts";
import { sha256Hex } from "../../../shared/auth/hash.ts";
import { parseOwnerKey } from "../../../shared/org/owner-keys.ts";
import type { Env } from "../../env.ts";
import { lookupName } from "../../objects/directory/name-lookup.ts";
import { ownerKeysObject, ownerObject } from "../../objects/owner/owner-object.ts";
import type { Proven } from "./auth.ts";

export async function proveOwnerKey(
  env: Env,
  token: string,
  owner: string,
  repo: string,
): Promise<Proven> {
  const parsed = parseOwnerKey(token);
  if (!parsed) return unauthorized("unknown owner key");
  const fullName = `${owner}/${repo}`;
  // The key is proven by the owner's object before anything is said about the repository.
  const { installationId } = parsed;
  const hash = await sha256Hex(token);
  let [current, verdict] = await Promise.all([
    ownerObject(env, owner).installation(),
    ownerKeysObject(env, installationId).verifyKey(hash, installationId, Date.now()),
  ]);
  if (current.installationId !== installationId) {
    return forbidden(`the owner key does not belong to ${owner}'s installation`);
  }
  // A key minted before keys lived by installation was just moved there: ask again.
  if (!verdict.ok && current.movedKeys > 0) {
    verdict = await ownerKeysObject(env, installationId).verifyKey(
      hash,
      installationId,
      Date.now(),
    );
  }
  if (!verdict.ok) return unauthorized(`${verdict.reason} owner key`);
  const entry = await lookupName(env, fullName);
  // A repository of this name that is not installed, or not in the key's installation (moved to
  // another owner, or removed): out of the key's reach at once.
  const resolution =
    entry === null || entry.status === "removed"
      ? notInstalled(fullName)
      : entry.installationId !== installationId
        ? forbidden(`the owner key does not reach ${fullName}: it is not in the key's installation`)
        : {
            ok: true as const,
            repo: {
              repoId: entry.repoId,
              fullName: entry.fullName,
              installationId: entry.installationId,
            },
          };
  return { ok: true, caller: { kind: "key", access: "write" }, resolution };
}
