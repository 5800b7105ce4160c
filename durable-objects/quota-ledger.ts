import { enclosingPrefixes, type Usage } from "../shared/quota.ts";
import type { Mutation } from "./version-journal.ts";

const PREFIXES_PER_QUERY = 90;

/**
 * What each subtree of one storage root holds, in its RootJournal's SQLite,
 * updated in the same transaction as every commit, prune and redaction, so
 * the counts survive restarts by construction (there is no cache to lose).
 *
 * - `quota_files`: every live file the journal has seen written (path, size,
 *   the blob holding its current bytes). The journal's version rows cannot
 *   tell this: age pruning may drop a live file's only row.
 * - `quota_kept`: superseded content still kept (a version blob that is no
 *   file's current content), each blob once, charged to the path whose
 *   content it was. A blob is current or superseded, never both, so no byte
 *   is charged twice: `usage.bytes` = live bytes + superseded kept bytes.
 * - `quota_usage`: the counters of each tracked prefix. A change to a path
 *   touches only the rows of its enclosing prefixes (at most its depth).
 *
 * A journal older than these tables fills them once from its version rows
 * (durable-objects/quota-backfill.ts). Files it never saw written (stored
 * before history existed, or put in a disk folder by hand) are not counted
 * until a write through a cap replaces them.
 */
export class QuotaLedger {
  constructor(private readonly sql: SqlStorage) {}

  /** Accounts for a mutation storage did. Call inside the commit's transaction. */
  apply(change: Mutation): void {
    if (change.op === "write") {
      this.takeAway(change.path);
      this.put(change.path, change.size, change.blob);
    } else if (change.op === "delete") {
      this.takeAway(change.path);
    } else {
      const moving = this.live(change.path);
      this.takeAway(change.to);
      if (!moving) return;
      // The bytes move with the file: its blob stays its current content.
      this.sql.exec("DELETE FROM quota_files WHERE path = ?", change.path);
      this.count(change.path, -moving.size, -1);
      this.put(change.to, moving.size, moving.blob);
    }
  }

  /** A blob's bytes are gone (its last version pruned, or redacted): stop charging them, and never charge them later. */
  forgetBlob(blob: string): void {
    const kept = this.sql.exec<{ path: string; size: number }>(
      "SELECT path, size FROM quota_kept WHERE blob = ?",
      blob,
    );
    for (const row of kept.toArray()) this.count(row.path, -row.size, 0);
    this.sql.exec("DELETE FROM quota_kept WHERE blob = ?", blob);
    this.sql.exec("UPDATE quota_files SET blob = NULL WHERE blob = ?", blob);
  }

  live(path: string): { size: number; blob: string | null } | null {
    return (
      this.sql
        .exec<{ size: number; blob: string | null }>("SELECT size, blob FROM quota_files WHERE path = ?", path)
        .toArray()[0] ?? null
    );
  }

  /**
   * The usage of `prefix`, tracking it from now on. The first call computes
   * it from the tables above: two range scans on their path indexes, once
   * per prefix (the range is the keys from `a/` up to `a0`: SQLite compares
   * text bytewise, and "0" is the byte after "/"); every later commit keeps it current.
   */
  usage(prefix: string): Usage {
    const tracked = this.sql
      .exec<{ bytes: number; files: number }>("SELECT bytes, files FROM quota_usage WHERE prefix = ?", prefix)
      .toArray()[0];
    if (tracked) return { bytes: tracked.bytes, files: tracked.files };
    const within = prefix === "" ? "" : " WHERE path >= ? AND path < ?";
    const bounds = prefix === "" ? [] : [prefix, `${prefix.slice(0, -1)}0`];
    const live = this.sql
      .exec<{ bytes: number | null; files: number }>(
        `SELECT sum(size) AS bytes, count(*) AS files FROM quota_files${within}`,
        ...bounds,
      )
      .one();
    const kept = this.sql.exec<{ bytes: number | null }>(
      `SELECT sum(size) AS bytes FROM quota_kept${within}`,
      ...bounds,
    );
    const usage = { bytes: (live.bytes ?? 0) + (kept.one().bytes ?? 0), files: live.files };
    this.sql.exec("INSERT INTO quota_usage (prefix, bytes, files) VALUES (?, ?, ?)", prefix, usage.bytes, usage.files);
    return usage;
  }

  /** The path's current content leaves it: its live bytes go; its kept blob, if any, becomes superseded and counts. */
  private takeAway(path: string): void {
    const old = this.live(path);
    if (!old) return;
    this.sql.exec("DELETE FROM quota_files WHERE path = ?", path);
    this.count(path, -old.size, -1);
    if (old.blob === null) return;
    const charged = this.sql.exec(
      "INSERT OR IGNORE INTO quota_kept (blob, path, size) VALUES (?, ?, ?) RETURNING blob",
      old.blob,
      path,
      old.size,
    );
    if (charged.toArray().length > 0) this.count(path, old.size, 0);
  }

  private put(path: string, size: number, blob: string | null): void {
    this.sql.exec("INSERT INTO quota_files (path, size, blob) VALUES (?, ?, ?)", path, size, blob);
    this.count(path, size, 1);
  }

  private count(path: string, bytes: number, files: number): void {
    const prefixes = enclosingPrefixes(path);
    // A query binds at most 100 parameters; a deep path has more enclosing prefixes than that.
    for (let i = 0; i < prefixes.length; i += PREFIXES_PER_QUERY) {
      const some = prefixes.slice(i, i + PREFIXES_PER_QUERY);
      this.sql.exec(
        `UPDATE quota_usage SET bytes = bytes + ?, files = files + ? WHERE prefix IN (${some.map(() => "?").join(",")})`,
        bytes,
        files,
        ...some,
      );
    }
  }
}
