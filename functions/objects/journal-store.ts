import { formatInstant } from "../../shared/graph/time.ts";
import { AUDIT_LANES, type AuditLane, auditLane } from "../../shared/schedule/audit-lanes.ts";
import {
  AUDIT_LIMIT,
  DELIVERY_RETENTION_MS,
  type RetentionCutoffs,
} from "../../shared/schedule/retention.ts";
import type { Sql } from "./sql.ts";

/** What the audit log stores for an entry: a JSON object. */
export type AuditDetail = Record<string, string | number | boolean | null | object>;

export interface AuditEntry {
  seq: number;
  at: string;
  kind: string;
  detail: AuditDetail;
}

/**
 * The journal of a Durable Object: the delivery ids it has applied (deduplication) and its
 * audit log. The only code that runs SQL on `deliveries` and `audit`; the RepoObject has both
 * tables, the InstallationObject `deliveries` only.
 */
export class Journal {
  private readonly sql: Sql;
  private readonly auditInserts: Record<AuditLane, number> = { record: 0, activity: 0 };
  private deliveryInserts = 0;

  constructor(sql: Sql) {
    this.sql = sql;
  }

  hasDelivery(id: string): boolean {
    return this.sql`SELECT 1 FROM deliveries WHERE id = ${id}`.length > 0;
  }

  recordDelivery(id: string, receivedMs: number): void {
    this.sql`INSERT OR IGNORE INTO deliveries (id, received_ms) VALUES (${id}, ${receivedMs})`;
    // A busy repository records thousands a day: trimmed every hundred, besides the daily prune.
    this.deliveryInserts += 1;
    if (this.deliveryInserts % 100 === 0) this.pruneDeliveries(receivedMs);
  }

  /** Forgets delivery ids older than the retention period. */
  pruneDeliveries(nowMs: number): void {
    this.sql`DELETE FROM deliveries WHERE received_ms < ${nowMs - DELIVERY_RETENTION_MS}`;
  }

  /** The daily prune of both tables (the RepoObject's; the InstallationObject has no audit). */
  prune(cutoffs: RetentionCutoffs): void {
    this.sql`DELETE FROM deliveries WHERE received_ms < ${cutoffs.deliveriesMs}`;
    for (const lane of AUDIT_LANES) this.trimAudit(lane, cutoffs.auditLimit);
  }

  /** Keeps the latest `limit` entries of one lane. */
  private trimAudit(lane: AuditLane, limit: number): void {
    this.sql`DELETE FROM audit WHERE lane = ${lane} AND seq <= (
      SELECT seq FROM audit WHERE lane = ${lane} ORDER BY seq DESC LIMIT 1 OFFSET ${limit})`;
  }

  audit(kind: string, detail: unknown, atMs: number): void {
    const text = JSON.stringify(detail);
    const lane = auditLane(kind);
    this
      .sql`INSERT INTO audit (at_ms, kind, detail, lane) VALUES (${atMs}, ${kind}, ${text}, ${lane})`;
    // Trimmed every hundred entries of a lane: each stays bounded without a delete per event,
    // and one lane's volume never pushes the other's entries out.
    this.auditInserts[lane] += 1;
    if (this.auditInserts[lane] % 100 === 1) this.trimAudit(lane, AUDIT_LIMIT);
  }

  /** The latest entries, newest first. */
  auditLog(limit = 100): AuditEntry[] {
    return this.sql<{ seq: number; at_ms: number; kind: string; detail: string }>`
      SELECT seq, at_ms, kind, detail FROM audit ORDER BY seq DESC LIMIT ${limit}`.map((r) => ({
      seq: r.seq,
      at: formatInstant(r.at_ms),
      kind: r.kind,
      detail: JSON.parse(r.detail) as AuditDetail,
    }));
  }

  /**
   * An uninstall: the audit log names agents, their notes and who minted keys, and delivery ids
   * are the repository's too; both go.
   */
  wipe(): void {
    this.sql`DELETE FROM deliveries`;
    this.sql`DELETE FROM audit`;
  }
}
