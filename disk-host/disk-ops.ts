/**
 * The disk backend's operations other than write (see atomic-write.ts), with
 * the StorageAdapter semantics: a folder exists while it holds a file or its
 * marker (dir-visibility.ts), one a file leaves stays, the root always exists, and the same refusals (and messages) as R2.
 * Every name is resolved by `walk`, beneath the cap's root.
 */
import type { BigIntStats } from "node:fs";
import { etagListMatches, parseByteRange } from "../shared/http-conditions.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Stat } from "../shared/wire-types.ts";
import type {
  FileMeta,
  ReadOutcome,
  StorageListOptions,
  StorageListPage,
  StorageReadOptions,
} from "../storage-adapters/storage-adapter.ts";
import {
  closeEnd,
  type DirChain,
  entryKey,
  inDir,
  OPEN_NOFOLLOW,
  openRoot,
  pruneEmptyDirs,
  userSteps,
  type WalkEnd,
  walk,
} from "./beneath.ts";
import { listPage } from "./dir-listing.ts";
import { holdsFile, keepFolder } from "./dir-visibility.ts";
import { removeEmptyFolder } from "./empty-folders.ts";
import { fileRangeStream } from "./file-range-stream.ts";
import { errnoOf, failFromFs } from "./fs-errors.ts";
import type { HostContext } from "./host-context.ts";
import { identity } from "./meta-store.ts";
import { type FileHandle, open, rename, unlink } from "./sync-fs.ts";
import { treePage } from "./tree-walk.ts";

export async function readFile(
  ctx: HostContext,
  levels: string[][],
  segments: string[],
  options: StorageReadOptions,
): Promise<Result<ReadOutcome>> {
  if (segments.length === 0) return refuse("needsFileName");
  return withRoot<ReadOutcome>(ctx, levels, async (root) => {
    if (!root) return refuse("notFound");
    const found = await locate(ctx, root, segments);
    if (!found.ok) return found;
    const it = found.value;
    if (it.kind === "dir") return it.visible ? refuse("isDirectory") : refuse("notFound");
    if (it.kind === "none") return refuse("notFound");
    const { meta, file } = it;
    if (options.ifNoneMatch && etagListMatches(options.ifNoneMatch, meta.etag)) {
      await file.close();
      return ok({ status: "not_modified", meta });
    }
    const range = parseByteRange(options.range, meta.size);
    if (range === "unsatisfiable") {
      await file.close();
      return ok({ status: "unsatisfiable", meta });
    }
    const body = fileRangeStream(file, range?.start ?? 0, range ? range.end : meta.size - 1);
    return ok({ status: "body", meta, body, range });
  });
}

export async function statPath(ctx: HostContext, levels: string[][], segments: string[]): Promise<Result<Stat>> {
  return withRoot<Stat>(ctx, levels, async (root) => {
    if (segments.length === 0) return ok({ type: "dir" });
    if (!root) return refuse("notFound");
    const found = await locate(ctx, root, segments);
    if (!found.ok) return found;
    const it = found.value;
    if (it.kind === "file") {
      await it.file.close();
      return ok({ type: "file", ...it.meta });
    }
    return it.kind === "dir" && it.visible ? ok({ type: "dir" }) : refuse("notFound");
  });
}

/**
 * Like R2 (which skips the existence check on later pages), a page after a
 * cursor of a folder that is gone is simply empty.
 */
export async function listPath(
  ctx: HostContext,
  levels: string[][],
  segments: string[],
  options: StorageListOptions,
): Promise<Result<StorageListPage>> {
  const empty: StorageListPage = { entries: [], next: null };
  return withRoot(ctx, levels, async (root) => {
    if (!root) return segments.length === 0 || options.after !== null ? ok(empty) : refuse("notFound");
    const end = await walk(root, userSteps(segments), { followFinal: true });
    if (!end.ok) return end;
    const found = end.value;
    try {
      if (found.kind === "dir") {
        const exists = found.chain.atBoundary || options.after !== null || (await holdsFile(found.chain));
        if (!exists) return refuse("notFound");
        const atCapRoot = segments.length === 0;
        return options.depth !== undefined && options.depth !== 1
          ? ok(await treePage(ctx, found.chain, options, atCapRoot))
          : ok(await listPage(ctx, found.chain, options.after, options.limit, atCapRoot));
      }
      if (options.after !== null) return ok(empty);
      return found.kind === "file" ? refuse("isFile") : refuse("notFound");
    } finally {
      await closeEnd(found);
    }
  });
}

export async function removeFile(ctx: HostContext, levels: string[][], segments: string[]): Promise<Result<null>> {
  if (segments.length === 0) return refuse("needsFileName");
  return withRoot(ctx, levels, async (root) => {
    if (!root) return refuse("notFound");
    const end = await walk(root, userSteps(segments), { followFinal: false });
    if (!end.ok) return end;
    const found = end.value;
    try {
      const what = await judgeEntry(found, "isDirectory", LINK_IS_ENTRY);
      if (!what.ok) return what;
      if (!isNamedEntry(found)) return refuse("notFound");
      const { chain, name } = found;
      const removed = await ctx.locks.run([await entryKey(chain.top, name)], () => unlinkEntry(ctx, chain.top, name));
      if (removed.ok) await keepFolder(chain, ctx.base, ctx.fileMode);
      return removed;
    } finally {
      await closeEnd(found);
    }
  });
}

/**
 * Renames a file, or a link inside the root (to a file or a folder: the link
 * moves, like `mv`), within the held folders: atomic, and the source is never
 * lost. A moved relative link resolves from its new place, as with `mv`.
 */
export async function moveFile(
  ctx: HostContext,
  levels: string[][],
  from: string[],
  to: string[],
  overwrite: boolean,
): Promise<Result<null>> {
  if (from.length === 0 || to.length === 0) return refuse("needsFileName");
  return withRoot(ctx, levels, async (root) => {
    if (!root) return refuse("notFound");
    const srcEnd = await walk(root, userSteps(from), { followFinal: false });
    if (!srcEnd.ok) return srcEnd;
    const src = srcEnd.value;
    let dst: WalkEnd | null = null;
    let moved = false;
    try {
      const source = await judgeEntry(src, "cannotMoveDirectory", LINK_IS_ENTRY);
      if (!source.ok) return source;
      const walkDst = () =>
        walk(root, userSteps(to), { followFinal: false, mkdirs: { mode: ctx.dirMode, final: false } });
      let dstEnd = await walkDst();
      if (dstEnd.ok && dstEnd.value.kind === "dir") {
        // A folder holding no file does not exist for a cap; it must not block the file (see empty-folders.ts).
        await closeEnd(dstEnd.value);
        if (!(await removeEmptyFolder(root, to))) return refuse("destinationIsDirectory");
        dstEnd = await walkDst();
      }
      if (!dstEnd.ok) return dstEnd;
      dst = dstEnd.value;
      if (dst.kind === "absent" || dst.kind === "blocked") return refuse("destinationParentIsFile");
      if (dst.kind === "dir") return refuse("destinationIsDirectory");
      if (dst.kind === "special") return refuse("fileDirectoryClash");
      let existing: string | null = null;
      if (dst.kind === "file") existing = identity(dst.stat);
      if (dst.kind === "link") {
        const target = await judgeEntry(dst, "destinationIsDirectory");
        if (!target.ok) return target;
        existing = target.value;
      }
      if (!isNamedEntry(src) || !isNamedEntry(dst)) return refuse("notFound");
      const [from, onto] = [src, dst];
      const [srcKey, dstKey] = [await entryKey(from.chain.top, from.name), await entryKey(onto.chain.top, onto.name)];
      // The same file under both names (itself, or through a link): nothing to move.
      if (srcKey === dstKey || existing === source.value) return overwrite ? ok(null) : refuse("destinationExists");
      const result = await ctx.locks.run([srcKey, dstKey], () => renameEntry(ctx, from, onto, overwrite));
      moved = result.ok;
      return result;
    } finally {
      if (moved && isNamedEntry(src)) await keepFolder(src.chain, ctx.base, ctx.fileMode);
      else if (dst?.kind === "missing") await pruneEmptyDirs(dst.chain);
      await closeEnd(src);
      if (dst) await closeEnd(dst);
    }
  });
}

/**
 * Checks the folder a new cap will be rooted at: it must resolve inside its
 * parent's reach and not be a file. With `create` (admin roots) it is made,
 * with every missing level, at `ctx.dirMode`.
 */
export async function prepareRoot(ctx: HostContext, levels: string[][], create: boolean): Promise<Result<null>> {
  try {
    const root = await openRoot(ctx.base, levels, create ? ctx.dirMode : null);
    if (!root.ok) return root;
    if (root.value.kind === "blocked") return refuse("isFile");
    if (root.value.kind === "root") await root.value.release();
    return ok(null);
  } catch (error) {
    return failFromFs(error, create ? "writing" : "reading");
  }
}

/** Resolves the root (never creating it) and runs `use` with it, or with `null` for an empty root. */
async function withRoot<T>(
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
function isNamedEntry(end: WalkEnd): end is Extract<WalkEnd, { name: string }> {
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
async function locate(ctx: HostContext, root: DirChain, segments: string[]): Promise<Result<Located>> {
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
const LINK_IS_ENTRY = true;

/**
 * What a remove or a move finds at its (unfollowed) last name: the identity
 * of the file it is or leads to; `conflict` (`dirRefusal`) for a folder
 * holding files, unless `linkIsEntry` and it was reached through the link at
 * that name (then the folder's identity); `outside_root` for a link leading
 * outside; else `not_found`.
 */
async function judgeEntry(
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
async function unlinkEntry(ctx: HostContext, dir: FileHandle, name: string): Promise<Result<null>> {
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
async function renameEntry(
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
