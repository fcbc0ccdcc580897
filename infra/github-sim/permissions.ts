// The App's installation permissions, as GitHub enforces them: an installation token without
// the permission a route needs is answered 403 "Resource not accessible by integration", and
// an event is delivered only to installations granted the permission it belongs to.
import type { Identity } from "./auth.ts";
import { SimHttpError } from "./errors.ts";
import type { PermissionLevel, SimInstallation } from "./model.ts";
import type { SimState } from "./state.ts";

/** GitHub's answer to an App's token that lacks a permission. */
export const NOT_ACCESSIBLE = "Resource not accessible by integration";

/** The permission an event needs to reach an installation (others need only what they name). */
export const EVENT_PERMISSIONS: Readonly<Record<string, string>> = {
  check_run: "checks",
  check_suite: "checks",
  status: "statuses",
  workflow_run: "actions",
  projects_v2_item: "organization_projects",
};

export function hasPermission(
  inst: SimInstallation,
  name: string,
  level: PermissionLevel = "read",
): boolean {
  const granted = inst.permissions[name];
  return granted === "write" || (granted === "read" && level === "read");
}

/**
 * Throws GitHub's 403 when `identity` is an installation token whose installation lacks
 * `name` (at `level`); user tokens and the App's JWT pass (their own rules apply).
 */
export function requirePermission(
  state: SimState,
  identity: Identity,
  name: string,
  level: PermissionLevel = "read",
): void {
  if (identity.kind !== "installation") return;
  const inst = state.installations.get(identity.installationId);
  if (!inst || !hasPermission(inst, name, level)) throw new SimHttpError(403, NOT_ACCESSIBLE);
}
