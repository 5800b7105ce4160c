/**
 * The quota tables of a journal that kept versions before it kept quotas,
 * filled once from its version rows, before it serves a call (the format 2
 * migration runs this, journal-migrations.ts; nothing interleaves). A live file is a path whose
 * newest row wrote it; a kept blob that is no live file's content is
 * superseded, charged to the path of its oldest row (where it was written).
 * Every statement is idempotent, so a run cut short is simply run again: the
 * marker row is written last.
 *
 * What it cannot know: a live file whose every row was pruned (older than
 * `keepDays`), and files stored before history existed. Those stay
 * uncounted until a write through the vault replaces them.
 */
export function backfillQuotas(sql: SqlStorage): void {
  sql.exec("CREATE TABLE IF NOT EXISTS quota_meta (name TEXT PRIMARY KEY, value)");
  if (sql.exec("SELECT 1 FROM quota_meta WHERE name = 'backfilled'").toArray().length > 0) return;
  const versions = sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'versions'").toArray();
  if (versions.length > 0) {
    // One pass over the rows, each newest-row check a lookup on the (path, id) index.
    sql.exec(`INSERT OR IGNORE INTO quota_files (path, size, blob)
      SELECT v.path, coalesce(v.size, 0), v.blob FROM versions v
      WHERE v.op IN ('created', 'modified') AND v.id = (SELECT max(w.id) FROM versions w WHERE w.path = v.path)`);
    sql.exec(`INSERT OR IGNORE INTO quota_kept (blob, path, size)
      SELECT v.blob, v.path, coalesce(v.size, 0) FROM versions v
      WHERE v.blob IS NOT NULL AND NOT EXISTS (SELECT 1 FROM quota_files f WHERE f.blob = v.blob)
      ORDER BY v.id`);
  }
  sql.exec("INSERT OR REPLACE INTO quota_meta (name, value) VALUES ('backfilled', 1)");
}
