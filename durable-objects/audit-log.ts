import type { Result } from "../shared/result.ts";

/** One line of a cap's audit: what was asked through this cap and how it ended. Never a token. */
export interface AuditEntry {
  at: string;
  op: string;
  /** The path as the client sent it (cut to 256 characters), so refused attempts stay visible. */
  path: string | null;
  /** `ok`, or the wire error code. */
  outcome: string;
  /** The public id of a child this operation minted or revoked. */
  child: string | null;
}

const KEEP = 1000;
const MAX_PATH = 256;

/**
 * A bounded, append-only log in the cap's own SQLite storage. It lives and
 * dies with the cap: revocation clears it together with the rest of the state.
 */
export class AuditLog {
  constructor(private readonly sql: SqlStorage) {}

  record(op: string, path: string | null, result: Result<unknown>, child: string | null = null): void {
    const outcome = result.ok ? "ok" : result.error.code;
    // Created on demand: revocation's deleteAll() drops every table.
    this.sql.exec(`CREATE TABLE IF NOT EXISTS audit (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      at INTEGER NOT NULL, op TEXT NOT NULL, path TEXT, outcome TEXT NOT NULL, child TEXT)`);
    this.sql.exec(
      "INSERT INTO audit (at, op, path, outcome, child) VALUES (?, ?, ?, ?, ?)",
      Date.now(), op, path === null ? null : path.slice(0, MAX_PATH), outcome, child,
    );
    this.sql.exec("DELETE FROM audit WHERE seq <= (SELECT MAX(seq) FROM audit) - ?", KEEP);
  }

  /** Drops the log: a revoked cap keeps no history, even while its cascade is unfinished. */
  clear(): void {
    this.sql.exec("DROP TABLE IF EXISTS audit");
  }

  recent(limit: number): AuditEntry[] {
    const exists = this.sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'audit'").toArray().length > 0;
    if (!exists) return [];
    return this.sql
      .exec<{ at: number; op: string; path: string | null; outcome: string; child: string | null }>(
        "SELECT at, op, path, outcome, child FROM audit ORDER BY seq DESC LIMIT ?",
        limit,
      )
      .toArray()
      .map((row) => ({ ...row, at: new Date(row.at).toISOString() }));
  }
}
