// The circuit breaker's tables in the RepoObject's SQLite (`ci_reports`, `ci_state`, migration
// step 7): the only code that runs SQL on them. What a report means and which is newer is
// decided in shared/breaker/verdict.ts.
import { type CheckRecord, newerReport } from "../../../shared/breaker/verdict.ts";
import type { CiPermission } from "../../../shared/github/ci.ts";
import type { Sql } from "../sql.ts";

type ReportRow = {
  source: string;
  key: string;
  name: string;
  run_id: number;
  attempt: number;
  status: string;
  conclusion: string | null;
  url: string | null;
};

const record = (r: ReportRow): CheckRecord => ({
  source: r.source as CheckRecord["source"],
  key: r.key,
  name: r.name,
  runId: r.run_id,
  attempt: r.attempt,
  status: r.status as CheckRecord["status"],
  conclusion: r.conclusion,
  url: r.url,
});

/** The breaker's one row of state. */
export interface CiState {
  defaultBranch: string | null;
  /** The default branch's head and when it became the head (the push's time, or a read's). */
  head: { sha: string; atMs: number } | null;
  previousSha: string | null;
  /** Since when the verdict is red (null: not red), and the commit it is red for. */
  redSinceMs: number | null;
  redSha: string | null;
  /** Permissions GitHub refused at the last re-read (null: never read). */
  missing: CiPermission[] | null;
  readMs: number | null;
}

type StateRow = {
  default_branch: string | null;
  head_sha: string | null;
  head_at_ms: number | null;
  previous_sha: string | null;
  red_since_ms: number | null;
  red_sha: string | null;
  missing: string | null;
  read_ms: number | null;
};

export class CiStore {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  state(): CiState {
    const r = this.sql<StateRow>`SELECT default_branch, head_sha, head_at_ms, previous_sha,
      red_since_ms, red_sha, missing, read_ms FROM ci_state WHERE id = 0`[0];
    return {
      defaultBranch: r?.default_branch ?? null,
      head:
        r?.head_sha != null && r.head_at_ms != null
          ? { sha: r.head_sha, atMs: r.head_at_ms }
          : null,
      previousSha: r?.previous_sha ?? null,
      redSinceMs: r?.red_since_ms ?? null,
      redSha: r?.red_sha ?? null,
      missing: r?.missing == null ? null : (JSON.parse(r.missing) as CiPermission[]),
      readMs: r?.read_ms ?? null,
    };
  }

  private ensure(): void {
    this.sql`INSERT INTO ci_state (id) VALUES (0) ON CONFLICT (id) DO NOTHING`;
  }

  setDefaultBranch(name: string): void {
    this.ensure();
    this.sql`UPDATE ci_state SET default_branch = ${name} WHERE id = 0`;
  }

  /** A new head: the one before it becomes the previous head. */
  setHead(sha: string, atMs: number): void {
    this.ensure();
    this
      .sql`UPDATE ci_state SET previous_sha = CASE WHEN head_sha = ${sha} THEN previous_sha ELSE head_sha END,
      head_sha = ${sha}, head_at_ms = ${atMs} WHERE id = 0`;
  }

  setRed(sinceMs: number | null, sha: string | null): void {
    this.ensure();
    this.sql`UPDATE ci_state SET red_since_ms = ${sinceMs}, red_sha = ${sha} WHERE id = 0`;
  }

  setRead(missing: readonly CiPermission[], atMs: number): void {
    this.ensure();
    this
      .sql`UPDATE ci_state SET missing = ${JSON.stringify(missing)}, read_ms = ${atMs} WHERE id = 0`;
  }

  reports(sha: string): CheckRecord[] {
    return this.sql<ReportRow>`SELECT source, key, name, run_id, attempt, status, conclusion, url
      FROM ci_reports WHERE sha = ${sha}`.map(record);
  }

  /** Keeps the newer of the stored and the given report of its check; true when it changed. */
  report(sha: string, incoming: CheckRecord, nowMs: number): boolean {
    const stored = this.sql<ReportRow>`SELECT source, key, name, run_id, attempt, status,
      conclusion, url FROM ci_reports WHERE sha = ${sha} AND source = ${incoming.source}
      AND key = ${incoming.key}`[0];
    const before = stored === undefined ? undefined : record(stored);
    const kept = before === undefined ? incoming : newerReport(before, incoming);
    if (before !== undefined && (kept === before || sameReport(before, kept))) return false;
    this
      .sql`INSERT INTO ci_reports (sha, source, key, name, run_id, attempt, status, conclusion, url, seen_ms)
      VALUES (${sha}, ${kept.source}, ${kept.key}, ${kept.name}, ${kept.runId}, ${kept.attempt},
        ${kept.status}, ${kept.conclusion}, ${kept.url}, ${nowMs})
      ON CONFLICT (sha, source, key) DO UPDATE SET name = excluded.name, run_id = excluded.run_id,
        attempt = excluded.attempt, status = excluded.status, conclusion = excluded.conclusion,
        url = excluded.url, seen_ms = excluded.seen_ms`;
    return true;
  }

  /** Reports of commits other than the head and the one before it, last seen before `beforeMs`. */
  prune(beforeMs: number): void {
    const { head, previousSha } = this.state();
    this.sql`DELETE FROM ci_reports WHERE seen_ms < ${beforeMs}
      AND sha NOT IN (${head?.sha ?? ""}, ${previousSha ?? ""})`;
  }

  wipe(): void {
    this.sql`DELETE FROM ci_reports`;
    this.sql`DELETE FROM ci_state`;
  }
}

function sameReport(a: CheckRecord, b: CheckRecord): boolean {
  return (
    a.runId === b.runId &&
    a.attempt === b.attempt &&
    a.status === b.status &&
    a.conclusion === b.conclusion &&
    a.url === b.url &&
    a.name === b.name
  );
}
