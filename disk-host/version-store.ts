/**
 * Kept versions on disk: `<base>/.capvault-versions/<blob>`, each a hard link
 * to the inode a write renamed into place. Linking costs no copy and leaves
 * the live file a plain file a person can open; the vault never writes a
 * file in place (every write is a new inode renamed over the old), so the
 * linked bytes never change under the version. Blob names are 32 hex digits
 * (storage-adapters/version-blobs.ts), checked again here: no other name can
 * reach this folder, and no cap can name it (`.capvault-` is reserved).
 */
import { constants } from "node:fs";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { VersionBytes } from "../storage-adapters/storage-adapter.ts";
import { isBlobName, VERSIONS_DIR_NAME } from "../storage-adapters/version-blobs.ts";
import { inDir, OPEN_NOFOLLOW } from "./beneath.ts";
import { fileRangeStream } from "./file-range-stream.ts";
import { errnoOf } from "./fs-errors.ts";
import type { HostContext } from "./host-context.ts";
import { type FileHandle, link, mkdir, open, unlink } from "./sync-fs.ts";

/** Makes (mode 0700) and holds the versions folder; refuses one that is a link or not a folder. */
export async function openVersionsDir(base: FileHandle): Promise<FileHandle> {
  await mkdir(inDir(base, VERSIONS_DIR_NAME), { mode: 0o700 }).catch((error) => {
    if (errnoOf(error) !== "EEXIST") throw error;
  });
  const dir = await open(inDir(base, VERSIONS_DIR_NAME), OPEN_NOFOLLOW | constants.O_DIRECTORY).catch((error) => {
    throw new Error(`the disk root's ${VERSIONS_DIR_NAME} is ${errnoOf(error) === "ELOOP" ? "a link" : "unusable"}`);
  });
  return dir;
}

/** Links the file `name` in `dir` (a temp about to be renamed into place) as the version `blob`. */
export async function linkVersion(versions: FileHandle, dir: FileHandle, name: string, blob: string): Promise<void> {
  if (!isBlobName(blob)) throw new Error("not a blob name");
  await link(inDir(dir, name), inDir(versions, blob));
}

/**
 * Removes a version link; nothing there is success. When it was the last
 * name of its inode (the live file was replaced or deleted since), the
 * inode's sidecar goes too: a replace or delete keeps a sidecar while a
 * version still links its inode.
 */
export async function dropVersion(ctx: HostContext, blob: string): Promise<Result<null>> {
  if (!isBlobName(blob)) return ok(null);
  let file: FileHandle | null = null;
  try {
    file = await open(inDir(ctx.versions, blob), OPEN_NOFOLLOW);
    const before = await file.stat({ bigint: true });
    await unlink(inDir(ctx.versions, blob));
    if ((await file.stat({ bigint: true })).nlink === 0n) await ctx.meta.forget(before);
  } catch (error) {
    if (errnoOf(error) !== "ENOENT") return refuse("unavailable");
  } finally {
    await file?.close().catch(() => undefined);
  }
  return ok(null);
}

export async function readVersion(versions: FileHandle, blob: string): Promise<Result<VersionBytes>> {
  if (!isBlobName(blob)) return refuse("versionRedacted");
  let file: FileHandle;
  try {
    file = await open(inDir(versions, blob), OPEN_NOFOLLOW);
  } catch (error) {
    return errnoOf(error) === "ENOENT" ? refuse("versionRedacted") : refuse("unavailable");
  }
  const stat = await file.stat();
  if (!stat.isFile()) {
    await file.close().catch(() => undefined);
    return refuse("versionRedacted");
  }
  return ok({ size: stat.size, body: fileRangeStream(file, 0, stat.size - 1) });
}
