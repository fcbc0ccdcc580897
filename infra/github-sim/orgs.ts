// Organization memberships: who belongs to an organization, as an owner (`admin`) or a
// `member`, and whether they accepted the invitation (`active`) or not yet (`pending`). Every
// simulated account is an organization; an account with no memberships simply has none.
// Active owners have admin on every repository of their organization, as on GitHub.

export const ORG_ROLES = ["admin", "member"] as const;
export type OrgRole = (typeof ORG_ROLES)[number];
export const MEMBERSHIP_STATES = ["active", "pending"] as const;
export type MembershipState = (typeof MEMBERSHIP_STATES)[number];

export interface SimMembership {
  org: string;
  login: string;
  role: OrgRole;
  state: MembershipState;
}

export class OrgDirectory {
  /** Memberships by lower-cased organization, then lower-cased login. */
  private orgs = new Map<string, Map<string, SimMembership>>();

  /** Adds `login` to `org` or changes its role or state. */
  setMember(org: string, login: string, role: OrgRole, state: MembershipState): SimMembership {
    let members = this.orgs.get(org.toLowerCase());
    if (!members) {
      members = new Map();
      this.orgs.set(org.toLowerCase(), members);
    }
    const membership: SimMembership = { org, login, role, state };
    members.set(login.toLowerCase(), membership);
    return membership;
  }

  /** Returns false when `login` was not a member. */
  removeMember(org: string, login: string): boolean {
    return this.orgs.get(org.toLowerCase())?.delete(login.toLowerCase()) ?? false;
  }

  membership(org: string, login: string): SimMembership | undefined {
    return this.orgs.get(org.toLowerCase())?.get(login.toLowerCase());
  }

  members(org: string): SimMembership[] {
    return [...(this.orgs.get(org.toLowerCase())?.values() ?? [])];
  }

  /** Active members of any role: what grows an installation's rate limit. */
  activeMembers(org: string): number {
    return this.members(org).filter((m) => m.state === "active").length;
  }

  isActiveOwner(org: string, login: string): boolean {
    const m = this.membership(org, login);
    return m?.role === "admin" && m.state === "active";
  }

  reset(): void {
    this.orgs.clear();
  }
}
