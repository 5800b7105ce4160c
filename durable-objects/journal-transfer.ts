import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Backend } from "../shared/wire-types.ts";
import { isBlobName } from "../storage-adapters/version-blobs.ts";

/**
 * A root journal's tables as a vault export carries them (docs/export-import.md),
 * a page at a time in primary-key order, and written back row for row (same
 * version ids, actors and times) by an import. `quota_usage` is not carried:
 * it is a cache of the two quota tables, filled again on first use; `orphans`
 * neither: those bytes were on their way to being destroyed.
 */
export const JOURNAL_TABLES = ["versions", "inline_blobs", "journal_settings", "quota_files", "quota_kept"] as const;
export type JournalTable = (typeof JOURNAL_TABLES)[number];

/** Rows per page, both ways: a page of versions is a few hundred KiB of JSON at most. */
export const JOURNAL_PAGE_ROWS = 250;
/** The journal setting naming the archive its history came from: only that archive may write it again. */
export const IMPORTED_FROM = "importedFrom";

type Row = Record<string, SqlStorageValue>;
const KEYS: Record<JournalTable, string> = {
  versions: "id",
  inline_blobs: "blob",
  journal_settings: "name",
  quota_files: "path",
  quota_kept: "blob",
};
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const OPS = new Set(["created", "modified", "deleted", "moved"]);

export function isJournalTable(v: unknown): v is JournalTable {
  return typeof v === "string" && (JOURNAL_TABLES as readonly string[]).includes(v);
}

/** One page of `table` after the key `after` (a version id as text for `versions`), and the key to go on from. */
export function exportRows(
  sql: SqlStorage,
  table: JournalTable,
  after: string | null,
): { rows: Row[]; next: string | null } {
  const key = KEYS[table];
  const from = table === "versions" ? Number(after ?? 0) : (after ?? "");
  const rows = sql
    .exec<Row>(`SELECT * FROM ${table} WHERE ${key} > ? ORDER BY ${key} LIMIT ?`, from, JOURNAL_PAGE_ROWS)
    .toArray()
    .map((row): Row => (table === "inline_blobs" ? { ...row, bytes: toBase64(row.bytes as ArrayBuffer) } : { ...row }))
    .filter((row) => !(table === "journal_settings" && row.name === IMPORTED_FROM));
  const last = rows.at(-1);
  const full = rows.length === JOURNAL_PAGE_ROWS && last !== undefined;
  return { rows, next: full ? String(last[key]) : null };
}

/**
 * Up to a page of the blobs whose bytes live only as a version (no live
 * file's current content, not kept in the journal itself), each with a path
 * that held it, after the blob `after`; `next` to go on (a page may be short).
 */
export function supersededBlobs(
  sql: SqlStorage,
  after: string | null,
): { blobs: { blob: string; path: string }[]; next: string | null } {
  const scanned = sql
    .exec<{ blob: string; path: string }>(
      "SELECT blob, min(path) AS path FROM versions WHERE blob IS NOT NULL AND blob > ? GROUP BY blob ORDER BY blob LIMIT ?",
      after ?? "",
      JOURNAL_PAGE_ROWS,
    )
    .toArray();
  const blobs = scanned.filter(
    (b) =>
      sql.exec("SELECT 1 FROM quota_files WHERE blob = ? LIMIT 1", b.blob).toArray().length === 0 &&
      sql.exec("SELECT 1 FROM inline_blobs WHERE blob = ?", b.blob).toArray().length === 0,
  );
  const last = scanned.at(-1);
  return { blobs, next: scanned.length === JOURNAL_PAGE_ROWS && last ? last.blob : null };
}

/** The blob holding each live path's current bytes, as the quota ledger knows it (paths relative to level 0). */
export function liveBlobs(sql: SqlStorage, paths: readonly string[]): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (let i = 0; i < paths.length; i += 90) {
    const some = paths.slice(i, i + 90);
    const rows = sql.exec<{ path: string; blob: string | null }>(
      `SELECT path, blob FROM quota_files WHERE path IN (${some.map(() => "?").join(",")})`,
      ...some,
    );
    for (const row of rows) out[row.path] = row.blob;
  }
  return out;
}

/**
 * Writes a page of imported rows into `table` (inside the caller's
 * transaction). A journal that already holds history from anywhere but this
 * archive is refused: an import never mixes two histories under one root.
 */
export function importRows(
  sql: SqlStorage,
  archiveId: string,
  table: JournalTable,
  raw: unknown,
  backend: Backend,
): Result<number> {
  if (!Array.isArray(raw) || raw.length > JOURNAL_PAGE_ROWS) return refuse("importMalformed");
  const rows = raw as Row[];
  if (!rows.every((row) => validRow(table, row))) return refuse("importMalformed");
  const from = sql
    .exec<{ value: string }>("SELECT value FROM journal_settings WHERE name = ?", IMPORTED_FROM)
    .toArray()[0]?.value;
  if (from !== archiveId) {
    const versions = sql.exec("SELECT 1 FROM versions LIMIT 1").toArray().length;
    const files = sql.exec("SELECT 1 FROM quota_files LIMIT 1").toArray().length;
    if (versions + files > 0) return refuse("importHistoryExists");
    sql.exec("INSERT OR REPLACE INTO journal_settings (name, value) VALUES (?, ?)", IMPORTED_FROM, archiveId);
  }
  for (const row of rows) insertRow(sql, table, row, backend);
  // The usage cache is rebuilt from the two quota tables on its next read.
  if (table === "quota_files" || table === "quota_kept") sql.exec("DELETE FROM quota_usage");
  return ok(rows.length);
}

/** An empty version kept in the journal itself: a backend that keeps such versions inline (R2) has no blob for it. */
export function importInline(sql: SqlStorage, blob: string): void {
  sql.exec("INSERT OR IGNORE INTO inline_blobs (blob, bytes) VALUES (?, ?)", blob, new ArrayBuffer(0));
}

function insertRow(sql: SqlStorage, table: JournalTable, row: Row, backend: Backend): void {
  switch (table) {
    case "versions":
      sql.exec(
        "INSERT OR REPLACE INTO versions (id, path, op, at, size, sha256, content_type, actor, blob) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        row.id,
        row.path,
        row.op,
        row.at,
        row.size,
        row.sha256,
        row.content_type,
        row.actor,
        row.blob,
      );
      return;
    case "inline_blobs":
      sql.exec(
        "INSERT OR REPLACE INTO inline_blobs (blob, bytes) VALUES (?, ?)",
        row.blob,
        fromBase64(String(row.bytes)),
      );
      return;
    case "journal_settings":
      // The journal is remapped with its root: it names the backend it is on now.
      sql.exec(
        "INSERT OR REPLACE INTO journal_settings (name, value) VALUES (?, ?)",
        row.name,
        row.name === "backend" ? backend : row.value,
      );
      return;
    case "quota_files":
      sql.exec("INSERT OR REPLACE INTO quota_files (path, size, blob) VALUES (?, ?, ?)", row.path, row.size, row.blob);
      return;
    case "quota_kept":
      sql.exec("INSERT OR REPLACE INTO quota_kept (blob, path, size) VALUES (?, ?, ?)", row.blob, row.path, row.size);
      return;
  }
}

const isInt = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isIntOrNull = (v: unknown) => v === null || isInt(v);
const isStringOrNull = (v: unknown) => v === null || typeof v === "string";

/**
 * The longest text a row may hold (inline bytes aside): paths and content types are at most 1,024
 * bytes, ids and digests far less. A longer one failed the SQLite write as a 503 (a 3 MB setting name).
 */
const MAX_ROW_TEXT = 4096;

function validRow(table: JournalTable, row: unknown): boolean {
  if (typeof row !== "object" || row === null) return false;
  const r = row as Row;
  for (const [field, value] of Object.entries(r))
    if (typeof value === "string" && value.length > MAX_ROW_TEXT && !(table === "inline_blobs" && field === "bytes"))
      return false;
  switch (table) {
    case "versions":
      return (
        isInt(r.id) &&
        (r.id as number) >= 1 &&
        typeof r.path === "string" &&
        OPS.has(r.op as string) &&
        isInt(r.at) &&
        isIntOrNull(r.size) &&
        isStringOrNull(r.sha256) &&
        isStringOrNull(r.content_type) &&
        typeof r.actor === "string" &&
        (r.blob === null || isBlobName(r.blob))
      );
    case "inline_blobs":
      return isBlobName(r.blob) && typeof r.bytes === "string" && r.bytes.length <= 65_536 && BASE64.test(r.bytes);
    case "journal_settings":
      return (
        typeof r.name === "string" &&
        r.name !== IMPORTED_FROM &&
        (typeof r.value === "string" || typeof r.value === "number")
      );
    case "quota_files":
      return typeof r.path === "string" && isInt(r.size) && (r.blob === null || isBlobName(r.blob));
    case "quota_kept":
      return isBlobName(r.blob) && typeof r.path === "string" && isInt(r.size);
  }
}

function toBase64(bytes: ArrayBuffer): string {
  let binary = "";
  for (const b of new Uint8Array(bytes)) binary += String.fromCharCode(b);
  return btoa(binary);
}

function fromBase64(text: string): ArrayBuffer {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0)).buffer;
}
