/**
 * How a disk operation finds what it acts on, beneath the cap's root: the
 * root opened for the call, a path located as a read sees it, the entry a
 * remove or move finds at its last name (links judged, never followed out),
 * and the unlink and rename themselves, under the locks disk-ops.ts takes.
 */
import type { BigIntStats } from "node:fs";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { FileMeta } from "../storage-adapters/storage-adapter.ts";
import {
  closeEnd,
  type DirChain,
  entryKey,
  inDir,
  OPEN_NOFOLLOW,
  openRoot,
  userSteps,
  type WalkEnd,
  walk,
} from "./beneath.ts";
import { holdsFile } from "./dir-visibility.ts";
import { errnoOf, failFromFs } from "./fs-errors.ts";
import type { HostContext } from "./host-context.ts";
import { identity } from "./meta-store.ts";
import { type FileHandle, open, rename, unlink } from "./sync-fs.ts";

/** Resolves the root (never creating it) and runs `use` with it, or with `null` for an empty root. */
export async function withRoot<T>(
  ctx: HostContext,
  levels: string[][],
  use: (root: DirChain | null) => Promise<Result<T>>,
): Promise<Result<T>> {
  try {
    const root = await openRoot(ctx.base, levels, null);
    if (!root.ok) return root;
    if (root.value.kind !== "root") return await use(null);
    try {
      return await use(root.value.chain);
    } finally {
      await root.value.release();
    }
  } catch (error) {
    return failFromFs(error, "reading");
  }
}

/** A walk that ended at a name in a held folder (the folder being `chain.top`). */
export function isNamedEntry(end: WalkEnd): end is Extract<WalkEnd, { name: string }> {
  return "name" in end;
}

type Located =
  | { kind: "file"; file: FileHandle; stat: BigIntStats; meta: FileMeta }
  | { kind: "dir"; visible: boolean }
  | { kind: "none" };

/**
 * Resolves a path, links followed, to what a read or stat sees. A file is
 * reopened under its lock, so its content type and etag belong to the bytes
 * it serves even while a writer renames a new version into place.
 */
export async function locate(ctx: HostContext, root: DirChain, segments: string[]): Promise<Result<Located>> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const end = await walk(root, userSteps(segments), { followFinal: true });
    if (!end.ok) return end;
    const found = end.value;
    try {
      if (found.kind === "dir")
        return ok({ kind: "dir", visible: found.chain.atBoundary || (await holdsFile(found.chain)) });
      if (found.kind !== "file") return ok({ kind: "none" });
      await found.file.close();
      const dir = found.chain.top;
      const opened = await ctx.locks.run([await entryKey(dir, found.name)], () => openDescribed(ctx, dir, found.name));
      if (opened) return ok({ kind: "file", ...opened });
    } finally {
      await closeEnd(found);
    }
  }
  return refuse("keptChanging");
}

/** `null` when `name` is no longer a regular file (swapped since it was resolved). */
async function openDescribed(
  ctx: HostContext,
  dir: FileHandle,
  name: string,
): Promise<{ file: FileHandle; stat: BigIntStats; meta: FileMeta } | null> {
  let file: FileHandle;
  try {
    file = await open(inDir(dir, name), OPEN_NOFOLLOW);
  } catch (error) {
    if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ELOOP") return null;
    throw error;
  }
  try {
    const stat = await file.stat({ bigint: true });
    if (!stat.isFile()) {
      await file.close();
      return null;
    }
    return { file, stat, meta: await ctx.meta.describe(file, stat) };
  } catch (error) {
    await file.close();
    throw error;
  }
}

/**
 * A link to a folder (inside the root) is an entry of its own for remove and
 * move, as for `rm` and `mv`: removing it removes the link, never the files
 * of the folder it leads to, and moving it moves the link (one rename, so
 * atomic). Else a cap that deletes a folder file by file, reaching one
 * through a link, would empty a folder it never named.
 */
export const LINK_IS_ENTRY = true;

/**
 * What a remove or a move finds at its (unfollowed) last name: the identity
 * of the file it is or leads to; `conflict` (`dirRefusal`) for a folder
 * holding files, unless `linkIsEntry` and it was reached through the link at
 * that name (then the folder's identity); `outside_root` for a link leading
 * outside; else `not_found`.
 */
export async function judgeEntry(
  found: WalkEnd,
  dirRefusal: "isDirectory" | "cannotMoveDirectory" | "destinationIsDirectory",
  linkIsEntry = false,
  throughLink = false,
): Promise<Result<string>> {
  switch (found.kind) {
    case "file":
      return ok(identity(found.stat));
    case "dir":
      if (!(await holdsFile(found.chain))) return refuse("notFound");
      return linkIsEntry && throughLink
        ? ok(identity(await found.chain.top.stat({ bigint: true })))
        : refuse(dirRefusal);
    case "link": {
      const end = await walk(found.chain, [{ name: found.name, fromLink: false }], { followFinal: true });
      if (!end.ok) return end;
      try {
        return await judgeEntry(end.value, dirRefusal, linkIsEntry, true);
      } finally {
        await closeEnd(end.value);
      }
    }
    default:
      return refuse("notFound");
  }
}

/** Under the lock: removes the file (or link) at `name`; the link's target is left alone, like `rm`. */
export async function unlinkEntry(ctx: HostContext, dir: FileHandle, name: string): Promise<Result<null>> {
  let file: FileHandle | null = null;
  try {
    try {
      file = await open(inDir(dir, name), OPEN_NOFOLLOW);
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return refuse("notFound");
      if (errnoOf(error) !== "ELOOP") throw error;
    }
    const stat = file ? await file.stat({ bigint: true }) : null;
    if (stat?.isDirectory()) return refuse("isDirectory");
    // unlink never follows a link: whatever sits at `name` now, only that name goes.
    await unlink(inDir(dir, name));
    if (file && stat && (await file.stat({ bigint: true })).nlink === 0n) await ctx.meta.forget(stat);
    return ok(null);
  } catch (error) {
    return failFromFs(error, "writing");
  } finally {
    await file?.close();
  }
}

/** Under both locks: re-judges the destination as it is now, then renames. */
export async function renameEntry(
  ctx: HostContext,
  src: { chain: DirChain; name: string },
  dst: { chain: DirChain; name: string },
  overwrite: boolean,
): Promise<Result<null>> {
  let replaced: FileHandle | null = null;
  try {
    let exists = true;
    try {
      replaced = await open(inDir(dst.chain.top, dst.name), OPEN_NOFOLLOW);
    } catch (error) {
      if (errnoOf(error) === "ENOENT") exists = false;
      else if (errnoOf(error) !== "ELOOP") throw error;
    }
    const replacedStat = replaced ? await replaced.stat({ bigint: true }) : null;
    if (replacedStat?.isDirectory()) return refuse("destinationIsDirectory");
    if (exists && !overwrite) return refuse("destinationExists");
    try {
      await rename(inDir(src.chain.top, src.name), inDir(dst.chain.top, dst.name));
    } catch (error) {
      if (errnoOf(error) === "EXDEV") return refuse("otherFilesystem");
      throw error;
    }
    await dst.chain.top.sync();
    await src.chain.top.sync();
    if (replaced && replacedStat && (await replaced.stat({ bigint: true })).nlink === 0n)
      await ctx.meta.forget(replacedStat);
    return ok(null);
  } catch (error) {
    return failFromFs(error, "writing");
  } finally {
    await replaced?.close();
  }
}
