import { type QuotaRule, type Usage, underPrefix } from "../shared/quota.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { type UploadLimits, uploadDeadline } from "../storage-adapters/upload-limits.ts";

/** Time a journal commit may take after its upload's deadline before a hold is presumed abandoned. */
const COMMIT_GRACE_MS = 60_000;

/**
 * Room held for writes in flight, so a write is refused before it stores
 * anything: it holds its length against every rule of its cap's chain, and
 * the commit (or its failure) lets the hold go. The journal runs one call at
 * a time and `admit` awaits nothing, so check-and-hold is atomic: 32 writers
 * racing for the last bytes get exactly what fits.
 *
 * Holds live in SQLite, not memory: a journal evicted while an upload runs
 * (it may sit idle for a minute) would otherwise forget them and admit too
 * much. A hold whose write died (its cap object reset) is dropped once its
 * upload's deadline has passed: by then that upload has failed, storing nothing.
 */
export class QuotaHolds {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * Holds `length` bytes for a write to `path` if every rule has room for
   * it: bytes used plus held plus `length` (the most a write adds: the
   * content it replaces stays counted as a kept version), and one more file
   * unless the path is live or already held (holds of paths that are not
   * live count one file each, so a file deleted under a waiting overwrite
   * does not free a slot that write will take back).
   */
  admit(
    chain: readonly QuotaRule[],
    path: string,
    length: number,
    now: number,
    usage: (prefix: string) => Usage,
    isLive: (path: string) => boolean,
    /** The bounds storage times this upload by (the deployment's, not the defaults): a hold outlives its upload. */
    uploads: UploadLimits,
  ): Result<string> {
    this.sql.exec("DELETE FROM quota_holds WHERE until < ?", now);
    // Few rows: one per write in flight through quota'd caps of this root.
    const held = this.sql.exec<{ path: string; bytes: number }>("SELECT path, bytes FROM quota_holds").toArray();
    for (const rule of chain) {
      if (rule.maxBytes === null && rule.maxFiles === null) continue;
      const used = usage(rule.prefix);
      const inside = held.filter((h) => underPrefix(rule.prefix, h.path));
      const heldBytes = inside.reduce((sum, h) => sum + h.bytes, 0);
      const heldPaths = new Set(inside.map((h) => h.path).filter((p) => !isLive(p)));
      const newFile = isLive(path) || heldPaths.has(path) ? 0 : 1;
      if (rule.maxBytes !== null && used.bytes + heldBytes + length > rule.maxBytes)
        return refuse("quotaBytes", { limit: rule.maxBytes });
      if (rule.maxFiles !== null && used.files + heldPaths.size + newFile > rule.maxFiles)
        return refuse("quotaFiles", { limit: rule.maxFiles });
    }
    const until = uploadDeadline(length, uploads, now) + COMMIT_GRACE_MS;
    const row = this.sql
      .exec<{ id: number }>(
        "INSERT INTO quota_holds (path, bytes, until) VALUES (?, ?, ?) RETURNING id",
        path,
        length,
        until,
      )
      .one();
    return ok(String(row.id));
  }

  release(id: string | null | undefined): void {
    if (typeof id === "string" && /^[1-9][0-9]{0,15}$/.test(id))
      this.sql.exec("DELETE FROM quota_holds WHERE id = ?", Number(id));
  }
}
