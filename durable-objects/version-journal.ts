import type { VersionOperation } from "../shared/wire-types.ts";

/** One stored version. `path` is relative to the root's level 0 and never leaves the journal unscoped. */
export type VersionRow = {
  id: number;
  path: string;
  op: VersionOperation;
  at: number;
  size: number | null;
  sha256: string | null;
  content_type: string | null;
  actor: string;
  /** The version blob holding its bytes (storage-adapters/version-blobs.ts), `null` once redacted or never kept. */
  blob: string | null;
};

/** What one storage mutation through a cap did, as the cap object reports it (paths relative to level 0). */
export type Mutation =
  | {
      op: "write";
      path: string;
      created: boolean;
      size: number;
      sha256: string;
      contentType: string;
      blob: string | null;
      /** The quota hold this write took before storage was touched (durable-objects/quota-holds.ts). */
      hold?: string | null;
      /** The blob's bytes, when small enough to be kept here rather than in storage (version-blobs.ts). */
      bytes?: Uint8Array | null | undefined;
    }
  | { op: "delete"; path: string }
  | { op: "move"; path: string; to: string };

/** Rows dropped per path and per commit beyond `keepVersions`: a commit adds at most two rows, so this keeps up. */
const PRUNE_PER_COMMIT = 16;
const KEPT_BYTES = "keptBytes";

/**
 * The version table of one storage root, in its RootJournal's SQLite. Every
 * query is bounded and walks an index: a path's history by (path, id), age
 * by (at), blob sharing by (blob); nothing scans the whole table.
 *
 * A delete or move records no new bytes: its row points at the blob of the
 * version it took away, so several rows may share a blob. A blob's bytes go
 * (to `orphans`, for the alarm to destroy in storage) when its last row goes,
 * or at once for every row when one of them is redacted.
 */
export class VersionJournal {
  constructor(
    private readonly sql: SqlStorage,
    /** Told of each blob whose bytes go, inside the same transaction (quota accounting). */
    private readonly onOrphan: (blob: string) => void = () => {},
  ) {}

  /** Records a mutation; returns the newest id it wrote. Synchronous, so one commit of the object. */
  record(change: Mutation, actor: string, at: number, keepVersions: number): number {
    let id: number;
    if (change.op === "write") {
      id = this.insert(change.path, change.created ? "created" : "modified", at, actor, {
        size: change.size,
        sha256: change.sha256,
        content_type: change.contentType,
        blob: change.blob,
      });
      if (change.blob !== null) this.addKeptBytes(change.size);
      if (change.blob !== null && change.bytes)
        this.sql.exec("INSERT INTO inline_blobs (blob, bytes) VALUES (?, ?)", change.blob, change.bytes.slice().buffer);
    } else {
      const gone = this.liveContent(change.path);
      id = this.insert(change.path, change.op === "delete" ? "deleted" : "moved", at, actor, gone);
      if (change.op === "move") {
        const replaced = this.liveContent(change.to).blob !== undefined;
        id = this.insert(change.to, replaced ? "modified" : "created", at, actor, gone);
        this.prunePath(change.to, keepVersions);
      }
    }
    this.prunePath(change.path, keepVersions);
    return id;
  }

  /** Up to `limit` versions of `path` older than `before` and not older than `from`, newest first. */
  history(path: string, before: number | null, limit: number, from = 0): VersionRow[] {
    return this.sql
      .exec<VersionRow>(
        "SELECT * FROM versions WHERE path = ? AND id < ? AND id >= ? ORDER BY id DESC LIMIT ?",
        path,
        before ?? Number.MAX_SAFE_INTEGER,
        from,
        limit,
      )
      .toArray();
  }

  /** Whether a row older than `from` holds `blob`: redacting it would reach history from before `from`. */
  heldBefore(blob: string, from: number): boolean {
    return this.sql.exec("SELECT 1 FROM versions WHERE blob = ? AND id < ? LIMIT 1", blob, from).toArray().length > 0;
  }

  /** Up to `limit` versions after `id`, oldest first, on the primary key. */
  after(id: number, limit: number): VersionRow[] {
    return this.sql.exec<VersionRow>("SELECT * FROM versions WHERE id > ? ORDER BY id LIMIT ?", id, limit).toArray();
  }

  newestId(): number {
    return this.sql.exec<{ id: number | null }>("SELECT max(id) AS id FROM versions").one().id ?? 0;
  }

  find(id: number): VersionRow | null {
    return this.sql.exec<VersionRow>("SELECT * FROM versions WHERE id = ?", id).toArray()[0] ?? null;
  }

  /**
   * Destroys a blob's bytes for every row holding it; the rows stay, marked
   * redacted, without their hash: a hash of a short secret (a PIN, a
   * password) lets anyone with `read` confirm guesses of what was redacted.
   */
  redact(blob: string): void {
    const held = this.sql.exec<{ size: number | null }>("SELECT size FROM versions WHERE blob = ? LIMIT 1", blob);
    const size = held.toArray()[0]?.size ?? null;
    this.sql.exec("UPDATE versions SET blob = NULL, sha256 = NULL WHERE blob = ?", blob);
    this.orphan(blob, size);
  }

  /** The bytes of a blob kept in this journal, or null when they live in storage (or are gone). */
  inlineBytes(blob: string): Uint8Array | null {
    const row = this.sql.exec<{ bytes: ArrayBuffer }>("SELECT bytes FROM inline_blobs WHERE blob = ?", blob).toArray();
    return row[0] ? new Uint8Array(row[0].bytes) : null;
  }

  /** Drops up to `limit` rows older than `cutoff`, oldest first; returns how many. */
  pruneOlder(cutoff: number, limit: number): number {
    const rows = this.sql
      .exec<Pick<VersionRow, "id" | "blob" | "size">>(
        "SELECT id, blob, size FROM versions WHERE at < ? ORDER BY at LIMIT ?",
        cutoff,
        limit,
      )
      .toArray();
    for (const row of rows) this.dropRow(row);
    return rows.length;
  }

  oldestAt(): number | null {
    return this.sql.exec<{ at: number }>("SELECT at FROM versions ORDER BY at LIMIT 1").toArray()[0]?.at ?? null;
  }

  orphans(limit: number): string[] {
    return this.sql
      .exec<{ blob: string }>("SELECT blob FROM orphans LIMIT ?", limit)
      .toArray()
      .map((r) => r.blob);
  }

  forgetOrphan(blob: string): void {
    this.sql.exec("DELETE FROM orphans WHERE blob = ?", blob);
  }

  /** Bytes of the version blobs kept (each blob once): what a quota would charge for history. */
  keptBytes(): number {
    return this.setting<number>(KEPT_BYTES) ?? 0;
  }

  setting<T extends SqlStorageValue>(name: string): T | null {
    return (
      this.sql.exec<{ value: T }>("SELECT value FROM journal_settings WHERE name = ?", name).toArray()[0]?.value ?? null
    );
  }

  setSetting(name: string, value: string | number): void {
    this.sql.exec("INSERT OR REPLACE INTO journal_settings (name, value) VALUES (?, ?)", name, value);
  }

  /** The content a path holds now, as far as the journal knows: its newest row, unless that took it away. */
  private liveContent(path: string): Partial<VersionRow> {
    const newest = this.history(path, null, 1)[0];
    if (!newest || newest.op === "deleted" || newest.op === "moved") return {};
    return { size: newest.size, sha256: newest.sha256, content_type: newest.content_type, blob: newest.blob };
  }

  private insert(path: string, op: VersionOperation, at: number, actor: string, content: Partial<VersionRow>): number {
    return this.sql
      .exec<{ id: number }>(
        "INSERT INTO versions (path, op, at, size, sha256, content_type, actor, blob) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        path,
        op,
        at,
        content.size ?? null,
        content.sha256 ?? null,
        content.content_type ?? null,
        actor,
        content.blob ?? null,
      )
      .one().id;
  }

  private prunePath(path: string, keep: number): void {
    const rows = this.sql
      .exec<Pick<VersionRow, "id" | "blob" | "size">>(
        "SELECT id, blob, size FROM versions WHERE path = ? ORDER BY id DESC LIMIT ? OFFSET ?",
        path,
        PRUNE_PER_COMMIT,
        keep,
      )
      .toArray();
    for (const row of rows) this.dropRow(row);
  }

  private dropRow(row: Pick<VersionRow, "id" | "blob" | "size">): void {
    this.sql.exec("DELETE FROM versions WHERE id = ?", row.id);
    if (row.blob === null) return;
    const shared = this.sql.exec("SELECT 1 FROM versions WHERE blob = ? LIMIT 1", row.blob).toArray().length > 0;
    if (!shared) this.orphan(row.blob, row.size);
  }

  private orphan(blob: string, size: number | null): void {
    const inline = this.sql.exec("DELETE FROM inline_blobs WHERE blob = ? RETURNING blob", blob).toArray().length > 0;
    if (!inline) this.sql.exec("INSERT OR IGNORE INTO orphans (blob) VALUES (?)", blob);
    this.onOrphan(blob);
    this.addKeptBytes(-(size ?? 0));
  }

  private addKeptBytes(delta: number): void {
    this.setSetting(KEPT_BYTES, Math.max(0, this.keptBytes() + delta));
  }
}
