// The settings the status page's GitHub login needs, validated once per request: each missing
// or malformed one is named (never its value).
import { z } from "zod";
import { htmlBaseFor } from "../../../shared/claims/rules.ts";
import { MIN_SECRET_LENGTH } from "../../../shared/status/session.ts";

const LoginSettingsSchema = z.object({
  GITHUB_APP_CLIENT_ID: z.string().trim().min(1, "is not set"),
  GITHUB_APP_CLIENT_SECRET: z.string().trim().min(1, "is not set"),
  SESSION_SECRET: z
    .string()
    .min(
      MIN_SECRET_LENGTH,
      `must be at least ${MIN_SECRET_LENGTH} characters (e.g. openssl rand -hex 32)`,
    ),
  GITHUB_API_URL: z.url().optional(),
  GITHUB_WEB_URL: z.url().optional(),
  PUBLIC_URL: z.url().optional(),
});

/** The settings read here (a part of the Worker's `Env`, so this module needs no Worker types). */
export type LoginEnv = {
  [K in
    | "GITHUB_APP_CLIENT_ID"
    | "GITHUB_APP_CLIENT_SECRET"
    | "SESSION_SECRET"
    | "GITHUB_API_URL"
    | "GITHUB_WEB_URL"
    | "PUBLIC_URL"]?: string | undefined;
};

export interface LoginSettings {
  clientId: string;
  clientSecret: string;
  sessionSecret: string;
  /** Where GitHub's web pages are: `/login/oauth/*` and issue links (github.com, GHE, the simulator). */
  webUrl: string;
  /** The Worker's own origin for the OAuth callback: PUBLIC_URL, else the request's origin. */
  publicUrl: string | null;
}

const blank = (v: string | undefined) =>
  v === undefined || v.trim() === "" ? undefined : v.trim();

/** The web URL of GitHub for this Worker: GITHUB_WEB_URL, else derived from GITHUB_API_URL. */
export function webUrlOf(env: LoginEnv): string {
  return (
    blank(env.GITHUB_WEB_URL)?.replace(/\/+$/, "") ??
    htmlBaseFor(blank(env.GITHUB_API_URL) ?? "https://api.github.com")
  );
}

export function loginSettings(
  env: LoginEnv,
): { ok: true; settings: LoginSettings } | { ok: false; problems: string[] } {
  const parsed = LoginSettingsSchema.safeParse({
    GITHUB_APP_CLIENT_ID: env.GITHUB_APP_CLIENT_ID ?? "",
    GITHUB_APP_CLIENT_SECRET: env.GITHUB_APP_CLIENT_SECRET ?? "",
    SESSION_SECRET: env.SESSION_SECRET ?? "",
    GITHUB_API_URL: blank(env.GITHUB_API_URL),
    GITHUB_WEB_URL: blank(env.GITHUB_WEB_URL),
    PUBLIC_URL: blank(env.PUBLIC_URL),
  });
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((i) => `${String(i.path[0])} ${i.message}`),
    };
  }
  const s = parsed.data;
  return {
    ok: true,
    settings: {
      clientId: s.GITHUB_APP_CLIENT_ID,
      clientSecret: s.GITHUB_APP_CLIENT_SECRET,
      sessionSecret: s.SESSION_SECRET,
      webUrl: webUrlOf(env),
      publicUrl: s.PUBLIC_URL?.replace(/\/+$/, "") ?? null,
    },
  };
}
