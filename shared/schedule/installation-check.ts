/**
 * The cron's installation check (issue 9 fix 3): once a day each repository asks GitHub which
 * installation of the App covers it, so a move, removal or addition whose webhooks were all
 * lost is still found. Which repositories a tick checks, and what an answer means, are pure
 * rules here; functions/installation-check.ts asks GitHub and applies them.
 */
import type { RepoStatus } from "../ingest/lifecycle.ts";

/** The cron runs every 15 minutes: 96 ticks a day, each checking its share of repositories. */
export const CHECK_TICK_MS = 15 * 60_000;
export const CHECK_TICKS_PER_DAY = 96;
/** At most this many checks in one tick (each is one to a few GitHub requests). */
export const MAX_CHECKS_PER_TICK = 50;

/** The tick of the day (0..95) at which a repository is checked: spread by a hash of its id. */
export function installationCheckSlot(repoId: number): number {
  return (Math.imul(repoId | 0, 0x9e3779b1) >>> 0) % CHECK_TICKS_PER_DAY;
}

/** The tick of the day a scheduled time falls in (0..95). */
export function tickOfDay(scheduledTimeMs: number): number {
  return Math.floor(scheduledTimeMs / CHECK_TICK_MS) % CHECK_TICKS_PER_DAY;
}

/**
 * The repositories the tick at `scheduledTimeMs` checks: those whose slot it is (so each is
 * checked once a day), at most `max` of them (more only when a deployment has more than
 * `max * 96` repositories; the rest wait for the next day).
 */
export function installationChecksDue<T extends { repoId: number }>(
  entries: readonly T[],
  scheduledTimeMs: number,
  max = MAX_CHECKS_PER_TICK,
): T[] {
  const tick = tickOfDay(scheduledTimeMs);
  return entries.filter((e) => installationCheckSlot(e.repoId) === tick).slice(0, max);
}

/** What switchyard holds about a repository: its RepoObject's and its directory entry's view. */
export interface HeldInstallation {
  installationId: number;
  status: RepoStatus;
}

/** GitHub's answer, asked by repository id with the App's JWT (and the installation's list). */
export type InstallationAnswer =
  /** 404: the App is not installed on the repository (or the repository is gone). */
  | { kind: "not-installed" }
  | {
      kind: "installed";
      installationId: number;
      /** A suspended installation cannot mint tokens, so its list cannot be read. */
      suspended: boolean;
      /**
       * Whether the installation's repository list holds the repository's id (with the name
       * it gives there); null when not asked (see `needsListing`).
       */
      listed: { fullName: string } | false | null;
    };

export type InstallationCheckAction =
  /** Everything agrees. */
  | { kind: "none" }
  /** The RepoObject is right, its directory entry is not: write the object's identity. */
  | { kind: "directory" }
  /** Installed nowhere: the held installation's removal path (confirmed with GitHub again). */
  | { kind: "removed"; installationId: number }
  /** Covered by `installationId` (a move, or an addition never delivered): its `added` path. */
  | { kind: "added"; installationId: number; fullName: string }
  /** GitHub's answers do not agree with each other (the list lacks the id): nothing changes. */
  | { kind: "unconfirmed"; installationId: number };

/** Whether the installation GitHub named is what the repository already holds. */
const holds = (object: HeldInstallation, installationId: number) =>
  object.installationId === installationId && object.status !== "removed";

/**
 * Whether the installation's repository list must be read to confirm the answer: only when the
 * answer would change something (the list is paged, so it is not read for every repository).
 */
export function needsListing(object: HeldInstallation, installationId: number): boolean {
  return !holds(object, installationId);
}

const sameEntry = (
  object: HeldInstallation & { fullName: string },
  entry: (HeldInstallation & { fullName: string }) | null,
) =>
  entry !== null &&
  entry.installationId === object.installationId &&
  entry.status === object.status &&
  entry.fullName === object.fullName;

/**
 * What to do about GitHub's answer. The RepoObject's state is what switchyard accepted; a
 * change goes through the same installation transitions webhooks use (so the RepoObject
 * accepts or refuses it, and the directory follows what it accepted). A suspension or
 * unsuspension never delivered is not decided here (installation lifecycle, not coverage).
 */
export function installationCheckAction(
  object: HeldInstallation & { fullName: string },
  entry: (HeldInstallation & { fullName: string }) | null,
  answer: InstallationAnswer,
): InstallationCheckAction {
  const directoryOnly = (): InstallationCheckAction =>
    sameEntry(object, entry) ? { kind: "none" } : { kind: "directory" };
  if (answer.kind === "not-installed") {
    return object.status === "removed"
      ? directoryOnly()
      : { kind: "removed", installationId: object.installationId };
  }
  if (holds(object, answer.installationId)) return directoryOnly();
  if (answer.suspended || !answer.listed) {
    return { kind: "unconfirmed", installationId: answer.installationId };
  }
  return {
    kind: "added",
    installationId: answer.installationId,
    fullName: answer.listed.fullName,
  };
}
