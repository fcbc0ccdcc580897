/**
 * Whose IDD markers count when the Worker resolves claims (spec 5): `idd.trustedMarkerActors`
 * when configured; otherwise authors with write access — `author_association` OWNER, MEMBER or
 * COLLABORATOR, or a permission check the caller made with GitHub — plus switchyard's own App
 * bot for the markers it mirrored. Never everyone.
 */

/** Associations GitHub only gives to people with write access (or owners of the account). */
export const WRITE_ASSOCIATIONS: ReadonlySet<string> = new Set(["OWNER", "MEMBER", "COLLABORATOR"]);

export interface MarkerAuthor {
  login: string;
  /** GitHub's account type (`User`, `Bot`). */
  type: string;
  /** `author_association` from the webhook, when known. */
  association: string | null;
  /** The comment's marker names one of switchyard's own claims. */
  ownMarker: boolean;
}

export interface TrustOptions {
  /** `idd.trustedMarkerActors`: when set, exactly these logins (case-insensitive). */
  configured: readonly string[] | null;
  /** A permission check already made with GitHub: true/false, or undefined when not made yet. */
  known: (login: string) => boolean | undefined;
}

/**
 * The trusted logins among `authors`, and the logins whose access is still unknown. Unknown
 * authors are listed as trusted meanwhile (fail closed: a claim that might be real blocks a
 * grant until GitHub says it is not).
 */
export function trustedMarkerAuthors(
  authors: readonly MarkerAuthor[],
  options: TrustOptions,
): { trusted: string[]; unknown: string[] } {
  if (options.configured !== null) return { trusted: [...options.configured], unknown: [] };
  const trusted = new Set<string>();
  const unknown = new Set<string>();
  for (const a of authors) {
    const login = a.login.toLowerCase();
    if (a.type === "Bot" && a.ownMarker) trusted.add(login);
    else if (a.association !== null && WRITE_ASSOCIATIONS.has(a.association.toUpperCase())) {
      trusted.add(login);
    } else if (a.type !== "Bot") {
      // Another App's bot has no collaborator permission to check: never trusted by default.
      const known = options.known(a.login);
      if (known === true) trusted.add(login);
      else if (known === undefined) unknown.add(login);
    }
  }
  for (const login of trusted) unknown.delete(login);
  return { trusted: [...trusted, ...unknown].sort(), unknown: [...unknown].sort() };
}

/** GitHub's collaborator permission (`admin`, `maintain`, `write`, `triage`, `read`, `none`) → trusted. */
export function permissionGrantsWrite(permission: string): boolean {
  return permission === "admin" || permission === "maintain" || permission === "write";
}
