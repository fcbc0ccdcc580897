// GitHub Actions OIDC tokens (spec 6.4): verified with jose against the issuer's keys, for the
// audience `PUBLIC_URL` (a setting; never the request's Host header). The key set is passed in
// (the Worker keeps one remote key set per issuer), so this runs anywhere and is testable with
// a local key set.
import { errors, type JWTVerifyGetKey, jwtVerify } from "jose";
import { z } from "zod";

export const DEFAULT_OIDC_ISSUER = "https://token.actions.githubusercontent.com";

/** The claims switchyard reads; GitHub sends `repository_id` as a string of digits. */
export const ActionsClaimsSchema = z.object({
  sub: z.string().min(1),
  repository_id: z.string().regex(/^[1-9][0-9]{0,15}$/, "repository_id must be a repository id"),
  repository: z.string().min(1).optional(),
});
export type ActionsClaims = z.infer<typeof ActionsClaimsSchema>;

/** `https://x.example/` and `https://x.example` name the same issuer or audience. */
export function trimUrl(url: string): string {
  return url.trim().replace(/\/+$/, "");
}

/** Where GitHub publishes the issuer's keys: `{issuer}/.well-known/jwks`. */
export function jwksUrl(issuer: string): string {
  return `${trimUrl(issuer)}/.well-known/jwks`;
}

export type OidcVerdict =
  | { ok: true; repoId: number; repository?: string; subject: string }
  | { ok: false; status: 401 | 503; message: string };

export interface OidcSettings {
  issuer: string;
  /** `PUBLIC_URL`: the only audience accepted (with or without a trailing slash). */
  audience: string;
  keys: JWTVerifyGetKey;
  /** Seconds of clock skew tolerated on `exp`, `nbf` and `iat` (default 5). */
  clockToleranceSeconds?: number;
  now?: Date;
}

/** A key set that could not be fetched is the issuer's outage (503), not a bad token (401). */
function unreachable(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout) return true;
  if (error instanceof errors.JOSEError) {
    return /JSON Web Key Set HTTP response/.test(error.message);
  }
  // fetch() failing (network) throws a plain TypeError from inside the key set.
  return error instanceof TypeError;
}

/**
 * Verifies signature (RS256, a key of the issuer's set), `iss`, `aud`, `exp`/`nbf` and the
 * claims switchyard reads. Messages say what failed, never the token.
 */
export async function verifyActionsToken(
  token: string,
  settings: OidcSettings,
): Promise<OidcVerdict> {
  const audience = trimUrl(settings.audience);
  let payload: unknown;
  try {
    const verified = await jwtVerify(token, settings.keys, {
      issuer: trimUrl(settings.issuer),
      audience: [audience, `${audience}/`],
      algorithms: ["RS256"],
      requiredClaims: ["exp", "iat"],
      clockTolerance: settings.clockToleranceSeconds ?? 5,
      ...(settings.now ? { currentDate: settings.now } : {}),
    });
    payload = verified.payload;
  } catch (error) {
    if (unreachable(error)) {
      return {
        ok: false,
        status: 503,
        message: "the OIDC issuer's key set could not be fetched; try again",
      };
    }
    const reason =
      error instanceof errors.JWTExpired
        ? "it has expired"
        : error instanceof errors.JWTClaimValidationFailed
          ? `${error.claim === "aud" ? `its audience is not ${audience} (PUBLIC_URL)` : error.claim === "iss" ? `its issuer is not ${trimUrl(settings.issuer)}` : `claim ${error.claim}: ${error.reason}`}`
          : error instanceof errors.JWKSNoMatchingKey ||
              error instanceof errors.JWSSignatureVerificationFailed
            ? "it is not signed by the issuer's keys"
            : error instanceof errors.JOSEError
              ? error.message
              : "it cannot be read";
    return { ok: false, status: 401, message: `invalid OIDC token: ${reason}` };
  }
  const claims = ActionsClaimsSchema.safeParse(payload);
  if (!claims.success) {
    const issue = claims.error.issues[0];
    return {
      ok: false,
      status: 401,
      message: `invalid OIDC token: ${issue?.path.join(".") || "claims"}: ${issue?.message ?? "invalid"}`,
    };
  }
  return {
    ok: true,
    repoId: Number(claims.data.repository_id),
    subject: claims.data.sub,
    ...(claims.data.repository ? { repository: claims.data.repository } : {}),
  };
}
