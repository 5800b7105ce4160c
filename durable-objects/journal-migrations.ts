import { backfillQuotas } from "./quota-backfill.ts";
import type { Migration } from "./state-migrations.ts";

/**
 * A root journal's migrations, run when it wakes (state-migrations.ts),
 * before any call: the tables of version-journal.ts, quota-ledger.ts and
 * quota-holds.ts are made here, never in their constructors, so a table
 * that changes changes in a step of its own.
 */
export const JOURNAL_MIGRATIONS: readonly Migration[] = [
  {
    to: 2,
    what: "the version, quota and hold tables, and the quota tables filled from the versions of a journal older than quotas",
    up({ sql }) {
      // Versions (version-journal.ts): a path's history by (path, id), age by (at), blob sharing by (blob).
      sql.exec(`CREATE TABLE IF NOT EXISTS versions (
        id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, op TEXT NOT NULL, at INTEGER NOT NULL,
        size INTEGER, sha256 TEXT, content_type TEXT, actor TEXT NOT NULL, blob TEXT)`);
      sql.exec("CREATE INDEX IF NOT EXISTS versions_by_path ON versions (path, id)");
      sql.exec("CREATE INDEX IF NOT EXISTS versions_by_at ON versions (at)");
      sql.exec("CREATE INDEX IF NOT EXISTS versions_by_blob ON versions (blob) WHERE blob IS NOT NULL");
      sql.exec("CREATE TABLE IF NOT EXISTS orphans (blob TEXT PRIMARY KEY)");
      // Small versions' bytes, by blob: a blob here is in no storage, so it goes with its last row, never to `orphans`.
      sql.exec("CREATE TABLE IF NOT EXISTS inline_blobs (blob TEXT PRIMARY KEY, bytes BLOB NOT NULL)");
      sql.exec("CREATE TABLE IF NOT EXISTS journal_settings (name TEXT PRIMARY KEY, value)");
      // Quotas (quota-ledger.ts).
      sql.exec("CREATE TABLE IF NOT EXISTS quota_files (path TEXT PRIMARY KEY, size INTEGER NOT NULL, blob TEXT)");
      sql.exec("CREATE INDEX IF NOT EXISTS quota_files_by_blob ON quota_files (blob) WHERE blob IS NOT NULL");
      sql.exec(
        "CREATE TABLE IF NOT EXISTS quota_kept (blob TEXT PRIMARY KEY, path TEXT NOT NULL, size INTEGER NOT NULL)",
      );
      sql.exec("CREATE INDEX IF NOT EXISTS quota_kept_by_path ON quota_kept (path)");
      sql.exec(
        "CREATE TABLE IF NOT EXISTS quota_usage (prefix TEXT PRIMARY KEY, bytes INTEGER NOT NULL, files INTEGER NOT NULL)",
      );
      // Holds of writes in flight (quota-holds.ts).
      sql.exec(`CREATE TABLE IF NOT EXISTS quota_holds (
        id INTEGER PRIMARY KEY AUTOINCREMENT, path TEXT NOT NULL, bytes INTEGER NOT NULL, until INTEGER NOT NULL)`);
      backfillQuotas(sql);
    },
  },
];
