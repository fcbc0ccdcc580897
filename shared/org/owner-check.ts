// Who may mint and revoke owner keys (spec 6.4): an active owner of the organization, proven
// with `GET /orgs/{org}/memberships/{username}` asked with the App's installation token (the
// caller's login from `GET /user` with their own token); for a user account, the account
// itself. Each refusal names the rule.
import { z } from "zod";
import { type AuthFailure, forbidden, unavailable } from "../auth/access.ts";

export const MembershipAnswerSchema = z.object({
  state: z.string(),
  role: z.string(),
});

/** GitHub's answer to the membership read, or why there was none. */
export type MembershipAnswer =
  | { kind: "ok"; body: unknown }
  | { kind: "error"; status: number | null; message?: string };

export type OwnerVerdict = { ok: true } | AuthFailure;

/** The organization permission the membership read needs (added to the App's manifest). */
export const MEMBERS_PERMISSION = "members: read";

export function ownerVerdict(
  login: string,
  owner: string,
  installationId: number,
  answer: MembershipAnswer | null,
): OwnerVerdict {
  if (login.toLowerCase() === owner.toLowerCase()) return { ok: true };
  if (answer === null) return forbidden(`${login} is not an owner of ${owner}`);
  if (answer.kind === "error") {
    if (answer.status === 404) {
      return forbidden(`${login} is not a member of the organization ${owner}`);
    }
    if (answer.status === 403) {
      return forbidden(
        `the App lacks the organization permission "${MEMBERS_PERMISSION}" on installation ${installationId} (${owner}), so organization owners cannot be told apart; accept the permission in the installation's settings`,
      );
    }
    return unavailable(
      `GitHub did not answer the membership check of ${login} in ${owner}${answer.status === null ? "" : ` (${answer.status})`}; try again`,
    );
  }
  const parsed = MembershipAnswerSchema.safeParse(answer.body);
  if (!parsed.success) {
    return unavailable(
      `GitHub's membership answer for ${login} in ${owner} is not a membership; try again`,
    );
  }
  const { role, state } = parsed.data;
  if (role !== "admin") {
    return forbidden(
      `${login} is a ${role} of ${owner}, not an owner: only owners manage owner keys`,
    );
  }
  if (state !== "active") {
    return forbidden(
      `${login}'s owner membership of ${owner} is ${state}, not active: accept the invitation first`,
    );
  }
  return { ok: true };
}

/**
 * A member may use the org queue with switchyard's own user token (`ghu_`), on the repositories
 * GitHub lists for it with push; a classic token (`ghp_`, `gho_`) may manage and list keys but
 * not claim: the refusal points to owner keys.
 */
export function classicTokenRefusal(owner: string): AuthFailure {
  return forbidden(
    `a classic GitHub token cannot use ${owner}'s organization queue: mint an owner key (POST /v1/orgs/${owner}/keys) and use it, or sign in with switchyard's GitHub App`,
  );
}

export function repositoryScopedRefusal(what: string, owner: string): AuthFailure {
  return forbidden(
    `${what} is repository-scoped: it cannot use ${owner}'s organization routes (use an owner key)`,
  );
}
