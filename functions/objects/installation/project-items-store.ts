// The InstallationObject's project tables (`watched_projects`, `project_notices`, migration step
// 4 of installation-store.ts): the only code that runs SQL on them. A `projects_v2_item` webhook
// names no repository; the installation keeps the notices of projects its repositories rank by
// until their issues are resolved and handed over (project-items.ts).
import {
  type ProjectItemNotice,
  ProjectItemNoticeSchema,
} from "../../../shared/queue/project-item.ts";
import type { Sql } from "../sql.ts";

export interface StoredNotice {
  notice: ProjectItemNotice;
  attempts: number;
}

export class ProjectItemsStore {
  private readonly sql: Sql;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  /** Repository `repoId` ranks by project `projectId` (null: by none). */
  watch(repoId: number, projectId: string | null): void {
    this.sql`DELETE FROM watched_projects WHERE repo_id = ${repoId}`;
    if (projectId !== null) {
      this.sql`INSERT INTO watched_projects (project_id, repo_id) VALUES (${projectId}, ${repoId})`;
    }
  }

  watchers(projectId: string): number[] {
    return this.sql<{ repo_id: number }>`
      SELECT repo_id FROM watched_projects WHERE project_id = ${projectId}`.map((r) => r.repo_id);
  }

  /** Keeps the latest notice of an item (an older one arriving late changes nothing). */
  record(notice: ProjectItemNotice): void {
    this.sql`INSERT INTO project_notices (item_id, notice, at_ms)
      VALUES (${notice.itemId}, ${JSON.stringify(notice)}, ${notice.atMs})
      ON CONFLICT (item_id) DO UPDATE SET notice = excluded.notice, at_ms = excluded.at_ms,
        attempts = 0, retry_at_ms = 0
      WHERE excluded.at_ms >= project_notices.at_ms`;
  }

  due(nowMs: number, limit: number): StoredNotice[] {
    return this.sql<{ notice: string; attempts: number }>`
      SELECT notice, attempts FROM project_notices WHERE retry_at_ms <= ${nowMs}
      ORDER BY at_ms LIMIT ${limit}`.map((r) => ({
      notice: ProjectItemNoticeSchema.parse(JSON.parse(r.notice)),
      attempts: r.attempts,
    }));
  }

  /** Handed over (or unresolvable): gone, unless a newer notice of the item replaced it. */
  done(notice: ProjectItemNotice): void {
    this
      .sql`DELETE FROM project_notices WHERE item_id = ${notice.itemId} AND at_ms = ${notice.atMs}`;
  }

  failed(notice: ProjectItemNotice, attempts: number, retryAtMs: number): void {
    this.sql`UPDATE project_notices SET attempts = ${attempts}, retry_at_ms = ${retryAtMs}
      WHERE item_id = ${notice.itemId}`;
  }

  earliestDueMs(): number | null {
    return (
      this.sql<{ at: number | null }>`SELECT MIN(retry_at_ms) AS at FROM project_notices`[0]?.at ??
      null
    );
  }
}
