import type { Result } from "../shared/result.ts";
import type { AuditEntry } from "../shared/wire-types.ts";

/** Successful operations kept: the history a holder audits. */
export const KEEP_DONE = 1000;
/**
 * Refused operations kept, apart from the successful ones. A refusal costs
 * the sender nothing, so refusals must never push what was done out of the
 * trail: they get their own small allowance, and repeats share one line.
 */
export const KEEP_REFUSED = 100;
const MAX_PATH = 256;
const TABLE = "audit_log";
/** Every table the log has used (the first one, `audit`, is carried over by the format 2 migration). */
export const AUDIT_TABLES: readonly string[] = [TABLE, "audit"];
export type AuditRow = {
  at: number;
  op: string;
  path: string | null;
  outcome: string;
  child: string | null;
  count: number;
};
type Row = AuditRow;

/**
 * A bounded log in the cap's own SQLite storage. It lives and dies with the
 * cap: revocation drops it together with the rest of the state.
 */
export class AuditLog {
  constructor(private readonly sql: SqlStorage) {}

  record(op: string, rawPath: string | null, result: Result<unknown>, child: string | null = null): void {
    this.ensureTable();
    const outcome = result.ok ? "ok" : result.error.code;
    const path = rawPath === null ? null : rawPath.slice(0, MAX_PATH);
    let count = 1;
    if (!result.ok) {
      // An identical refusal already kept becomes this one, counted, and moves up as the newest.
      const same = this.sql
        .exec<{ seq: number; count: number }>(
          `SELECT seq, count FROM ${TABLE} WHERE outcome = ? AND op = ? AND path IS ? AND child IS ? LIMIT 1`,
          outcome,
          op,
          path,
          child,
        )
        .toArray()[0];
      if (same) {
        count = same.count + 1;
        this.sql.exec(`DELETE FROM ${TABLE} WHERE seq = ?`, same.seq);
      }
    }
    this.sql.exec(
      `INSERT INTO ${TABLE} (at, op, path, outcome, child, count) VALUES (?, ?, ?, ?, ?, ?)`,
      Date.now(),
      op,
      path,
      outcome,
      child,
      count,
    );
    const done = result.ok ? 1 : 0;
    this.sql.exec(
      `DELETE FROM ${TABLE} WHERE seq IN (SELECT seq FROM ${TABLE} WHERE (outcome = 'ok') = ? ORDER BY seq DESC LIMIT -1 OFFSET ?)`,
      done,
      result.ok ? KEEP_DONE : KEEP_REFUSED,
    );
  }

  recent(limit: number): AuditEntry[] {
    if (!this.exists(TABLE)) return [];
    return this.sql
      .exec<Row>(`SELECT at, op, path, outcome, child, count FROM ${TABLE} ORDER BY seq DESC LIMIT ?`, limit)
      .toArray()
      .map((row) => ({ ...row, at: new Date(row.at).toISOString() }));
  }

  /** Every line kept, oldest first (at most KEEP_DONE + KEEP_REFUSED): what a re-issued cap carries over. */
  rows(): AuditRow[] {
    // A format-0 object is split at its wake (cap-migrations.ts); this covers one whose
    // old table appeared after it (the re-issue reads old objects, and tests plant them).
    splitLegacyAudit(this.sql);
    if (!this.exists(TABLE)) return [];
    return this.sql
      .exec<Row>(`SELECT at, op, path, outcome, child, count FROM ${TABLE} ORDER BY seq`)
      .toArray()
      .map((row) => ({ ...row }));
  }

  /** How many lines the log keeps now. */
  size(): number {
    if (!this.exists(TABLE)) return 0;
    return this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${TABLE}`).one().n;
  }

  /** Appends `rows` as they were (times and counts kept), before any line of this log's own. */
  adopt(rows: readonly AuditRow[]): void {
    this.ensureTable();
    for (const r of rows.slice(-(KEEP_DONE + KEEP_REFUSED)))
      this.sql.exec(
        `INSERT INTO ${TABLE} (at, op, path, outcome, child, count) VALUES (?, ?, ?, ?, ?, ?)`,
        r.at,
        r.op,
        r.path,
        r.outcome,
        r.child,
        r.count,
      );
  }

  /** Drops the log: a revoked cap keeps no history, even while its cascade is unfinished. */
  clear(): void {
    this.sql.exec(`DROP TABLE IF EXISTS ${TABLE}`);
    this.sql.exec("DROP TABLE IF EXISTS audit");
  }

  private ensureTable(): void {
    // Created on demand: revocation's deleteAll() drops every table.
    createAuditTable(this.sql);
  }

  private exists(name: string): boolean {
    return this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", name).toArray().length > 0;
  }
}

function createAuditTable(sql: SqlStorage): void {
  sql.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      at INTEGER NOT NULL, op TEXT NOT NULL, path TEXT, outcome TEXT NOT NULL, child TEXT,
      count INTEGER NOT NULL DEFAULT 1)`);
}

/**
 * Format 1 → 2 (durable-objects/cap-migrations.ts): a cap's log from before
 * refusals were kept apart (the table `audit`) becomes the split table. It
 * was carried over on the log's first use; now the migration does it once.
 */
export function splitLegacyAudit(sql: SqlStorage): void {
  if (sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'").toArray().length === 0) return;
  createAuditTable(sql);
  // Run to its end (`toArray`): a cursor left open keeps `audit` locked against the DROP.
  sql
    .exec(
      `INSERT INTO ${TABLE} (at, op, path, outcome, child) SELECT at, op, path, outcome, child FROM audit ORDER BY seq`,
    )
    .toArray();
  sql.exec("DROP TABLE audit");
}
