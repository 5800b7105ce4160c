/**
 * Content type and etag of files on disk, kept where no cap can reach them.
 *
 * A regular file has no place for the request's Content-Type, yet R2 returns
 * it, so the host keeps one small JSON sidecar per file in one reserved
 * folder, `<base>/.capvault-meta/<dev>-<ino>`, keyed by the file's identity
 * rather than its name. Why by identity: a rename (atomic write, move) keeps
 * it, and the sidecar of a new file exists *before* the file is renamed into
 * place, so a reader that opened either the old or the new file finds the
 * matching one. The reserved name is refused by the path parser, never listed,
 * and refused when reached through a link.
 *
 * The etag and sha256 are trusted from the sidecar only while size and mtime
 * (ns) are unchanged; a file edited or placed by hand (or whose sidecar is
 * older than sha256) has both computed on demand, in one pass, and then
 * stored in its sidecar (see {@link MetaStore.remember}), so listing a folder
 * of such files hashes each one once, not on every listing or restart.
 */
import { createHash, randomBytes } from "node:crypto";
import { type BigIntStats, constants } from "node:fs";
import { readdir } from "node:fs/promises";
import type { Validators } from "../shared/http-conditions.ts";
import { DEFAULT_CONTENT_TYPE, type FileMeta } from "../storage-adapters/storage-adapter.ts";
import { heldPath, inDir, OPEN_NOFOLLOW } from "./beneath.ts";
import { errnoOf } from "./fs-errors.ts";
import { type FileHandle, open, rename, unlink } from "./sync-fs.ts";

/** The folder under the base folder that holds every sidecar. */
export const META_DIR_NAME = ".capvault-meta";
/** Temp files: in the target's own folder for data, in the meta folder for sidecars. */
export const TEMP_PREFIX = ".capvault-tmp-";

const MAX_SIDECAR_BYTES = 64 * 1024;
const MAX_CACHED_ETAGS = 4096;
const HASH_CHUNK = 1024 * 1024;

/** What a file's bytes hash to. */
export interface ContentHashes {
  etag: string;
  sha256: string;
}

interface Sidecar {
  etag: string;
  /** Absent in sidecars written before hashes were kept. */
  sha256?: string;
  size: string;
  mtimeNs: string;
  /** 0 where the filesystem keeps no birth time. */
  btimeNs: string;
  contentType: string;
}

export function newTempName(): string {
  return TEMP_PREFIX + randomBytes(12).toString("hex");
}

/** Creates a new file that did not exist, in the folder `dir` holds, never through a link. */
export async function createExclusive(dir: FileHandle, name: string, mode: number): Promise<FileHandle> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  return open(inDir(dir, name), flags, mode);
}

export class MetaStore {
  private readonly hashes = new Map<string, ContentHashes>();

  /** `dir` is the meta folder, held open for the host's lifetime. */
  constructor(private readonly dir: FileHandle) {}

  /** Everything a stat or read reports about an open regular file. */
  async describe(file: FileHandle, stat: BigIntStats): Promise<FileMeta> {
    const sidecar = await this.load(stat);
    const { etag, sha256 } = await this.hashesOf(file, stat, sidecar);
    return {
      size: Number(stat.size),
      etag,
      sha256,
      modified: modifiedIso(stat),
      contentType: sidecar?.contentType ?? DEFAULT_CONTENT_TYPE,
    };
  }

  /** The hex MD5 and SHA-256 of an open regular file: what a write's precondition is judged against. */
  async validatorsOf(file: FileHandle, stat: BigIntStats): Promise<Validators> {
    return this.hashesOf(file, stat, await this.load(stat));
  }

  /**
   * Writes the sidecar of a temp file about to be renamed into place; durable once this resolves.
   * Written under its own name, not through a temp and a rename as {@link store} must for a live
   * file: it is named by the temp's identity, and no reader can open the temp before the rename,
   * so none can find the sidecar half written; a crash before the rename leaves an orphan the next
   * start sweeps. So its bytes and its name are made durable at once: two fsyncs side by side
   * instead of one after the other (measured: ~0.3-0.7 ms each on ext4, in every write's path).
   */
  async record(stat: BigIntStats, hashes: ContentHashes, contentType: string): Promise<void> {
    const name = identity(stat);
    const handle = await this.createFresh(name);
    try {
      await handle.writeFile(JSON.stringify(sidecarOf(stat, hashes, contentType)));
      // The content type must survive a crash as surely as the file it describes.
      const durable = await Promise.allSettled([handle.sync(), this.dir.sync()]);
      for (const outcome of durable) if (outcome.status === "rejected") throw outcome.reason;
    } finally {
      await handle.close();
    }
  }

  /** Drops the sidecar of a file that no longer exists. */
  async forget(stat: BigIntStats): Promise<void> {
    await unlink(inDir(this.dir, identity(stat))).catch(() => undefined);
  }

  /**
   * Removes sidecars (and sidecar temps) of files that no longer exist: those
   * whose identity is not in `live` and that are older than `since`, so a
   * write racing the sweep keeps its sidecar.
   */
  async collectOrphans(live: ReadonlySet<string>, since: number): Promise<void> {
    for (const name of await readdir(heldPath(this.dir))) {
      if (live.has(name)) continue;
      let handle: FileHandle;
      try {
        handle = await open(inDir(this.dir, name), OPEN_NOFOLLOW);
      } catch {
        await unlink(inDir(this.dir, name)).catch(() => undefined);
        continue;
      }
      const stat = await handle.stat().finally(() => handle.close());
      if (stat.mtimeMs < since) await unlink(inDir(this.dir, name)).catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.dir.close().catch(() => undefined);
  }

  private async load(stat: BigIntStats): Promise<Sidecar | null> {
    let handle: FileHandle;
    try {
      handle = await open(inDir(this.dir, identity(stat)), OPEN_NOFOLLOW);
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return null;
      throw error;
    }
    try {
      const own = await handle.stat();
      if (!own.isFile() || own.size > MAX_SIDECAR_BYTES) return null;
      const sidecar = JSON.parse(await handle.readFile("utf8")) as Partial<Sidecar>;
      if (!isSidecar(sidecar)) return null;
      // An inode number can be reused after a delete made by hand; the birth
      // time tells the new file from the old one where the filesystem keeps it.
      const btime = String(stat.birthtimeNs);
      if (sidecar.btimeNs !== "0" && btime !== "0" && sidecar.btimeNs !== btime) return null;
      return sidecar;
    } catch {
      return null;
    } finally {
      await handle.close();
    }
  }

  /**
   * A new sidecar file `name`, never opened through a link. One there already is a dead inode's
   * whose number this file now has (a file deleted by hand, a sidecar a crash left): it is removed,
   * not written through, since a name in this folder may have been made a link to anything.
   */
  private async createFresh(name: string): Promise<FileHandle> {
    try {
      return await createExclusive(this.dir, name, 0o600);
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") throw error;
      await unlink(inDir(this.dir, name));
      return createExclusive(this.dir, name, 0o600);
    }
  }

  /** Writes a sidecar atomically: a synced temp, then a rename, so a reader sees the old one or the new one whole. */
  private async store(name: string, sidecar: Sidecar): Promise<void> {
    const temp = newTempName();
    try {
      const handle = await createExclusive(this.dir, temp, 0o600);
      try {
        await handle.writeFile(JSON.stringify(sidecar));
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(inDir(this.dir, temp), inDir(this.dir, name));
    } catch (error) {
      await unlink(inDir(this.dir, temp)).catch(() => undefined);
      throw error;
    }
  }

  private async hashesOf(file: FileHandle, stat: BigIntStats, sidecar: Sidecar | null): Promise<ContentHashes> {
    if (sidecar && sameContent(sidecar, stat) && sidecar.sha256 !== undefined)
      return { etag: sidecar.etag, sha256: sidecar.sha256 };
    const hashes = await this.computeHashes(file, stat);
    if (hashes.unchanged) await this.remember(file, stat, hashes, sidecar?.contentType ?? DEFAULT_CONTENT_TYPE);
    return { etag: hashes.etag, sha256: hashes.sha256 };
  }

  /**
   * Stores hashes computed for a file placed by hand or with a legacy
   * sidecar, so the next stat or listing (even after a restart) reads them
   * instead of re-reading the whole file. Best effort: a cache that cannot
   * be written (read-only or full disk) costs a re-hash, never the answer.
   *
   * Why this cannot describe the wrong file: `file` is held open, so its
   * dev+ino names no other file meanwhile; the vault never rewrites a file in
   * place (a write is a new inode with its own sidecar, renamed over), and the
   * stored size+mtime make a later edit by hand distrust these hashes as it
   * does any sidecar's. A delete racing this store either forgets after our
   * rename or unlinked the file before our check below, which then drops the
   * sidecar, so no orphan waits for a reused inode.
   */
  private async remember(
    file: FileHandle,
    stat: BigIntStats,
    hashes: ContentHashes,
    contentType: string,
  ): Promise<void> {
    try {
      await this.store(identity(stat), sidecarOf(stat, hashes, contentType));
      const after = await file.stat({ bigint: true });
      if (after.nlink === 0n) await this.forget(stat);
    } catch {
      // Left to be computed again next time.
    }
  }

  /** `unchanged`: the file kept its size and mtime while it was hashed, so the hashes may be kept. */
  private async computeHashes(file: FileHandle, stat: BigIntStats): Promise<ContentHashes & { unchanged: boolean }> {
    const key = `${identity(stat)}-${stat.size}-${stat.mtimeNs}`;
    const cached = this.hashes.get(key);
    if (cached !== undefined) return { ...cached, unchanged: false };
    const hash = createHash("md5");
    const sha = createHash("sha256");
    const buffer = Buffer.allocUnsafe(HASH_CHUNK);
    // Exactly the bytes the reported size covers, even if the file grows meanwhile.
    const size = Number(stat.size);
    for (let position = 0; position < size; ) {
      const { bytesRead } = await file.read(buffer, 0, Math.min(HASH_CHUNK, size - position), position);
      if (bytesRead === 0) break;
      hash.update(buffer.subarray(0, bytesRead));
      sha.update(buffer.subarray(0, bytesRead));
      position += bytesRead;
    }
    const hashes = { etag: hash.digest("hex"), sha256: sha.digest("hex") };
    // Cache only if the file did not change while it was hashed.
    const after = await file.stat({ bigint: true });
    const unchanged = after.size === stat.size && after.mtimeNs === stat.mtimeNs;
    if (unchanged) {
      if (this.hashes.size >= MAX_CACHED_ETAGS) this.hashes.delete(this.hashes.keys().next().value!);
      this.hashes.set(key, hashes);
    }
    return { ...hashes, unchanged };
  }
}

/** A file's mtime as the ISO 8601 string the API reports (millisecond precision, like R2). */
export function modifiedIso(stat: BigIntStats): string {
  return new Date(Number(stat.mtimeNs / 1_000_000n)).toISOString();
}

/** The sidecar name of a file: its device and inode. */
export function identity(stat: BigIntStats): string {
  return `${stat.dev}-${stat.ino}`;
}

function sidecarOf(stat: BigIntStats, hashes: ContentHashes, contentType: string): Sidecar {
  return {
    etag: hashes.etag,
    sha256: hashes.sha256,
    size: String(stat.size),
    mtimeNs: String(stat.mtimeNs),
    btimeNs: String(stat.birthtimeNs),
    contentType,
  };
}

function sameContent(sidecar: Sidecar, stat: BigIntStats): boolean {
  return sidecar.size === String(stat.size) && sidecar.mtimeNs === String(stat.mtimeNs);
}

function isSidecar(value: Partial<Sidecar>): value is Sidecar {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof value.etag === "string" &&
    /^[0-9a-f]{32}$/.test(value.etag) &&
    (value.sha256 === undefined || (typeof value.sha256 === "string" && /^[0-9a-f]{64}$/.test(value.sha256))) &&
    typeof value.size === "string" &&
    typeof value.mtimeNs === "string" &&
    typeof value.btimeNs === "string" &&
    typeof value.contentType === "string" &&
    // Sidecars can be edited by anyone with a shell in the folder; a value
    // that is not a valid header would fail every read of the file. Only what
    // no header value can hold is refused (NUL, CR, LF): anything narrower
    // would drop content types the vault itself stored from a request header
    // (a tab, a long parameter), which R2 keeps and returns.
    !/[\0\r\n]/.test(value.contentType)
  );
}
