/**
 * The disk backend's operations other than write (see atomic-write.ts), with
 * the StorageAdapter semantics: a folder exists while it holds a file or its
 * marker (dir-visibility.ts), one a file leaves stays, the root always exists, and the same refusals (and messages) as R2.
 * Every name is resolved by `walk`, beneath the cap's root (disk-entries.ts).
 */
import { etagListMatches, parseByteRange } from "../shared/http-conditions.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Stat } from "../shared/wire-types.ts";
import type {
  ReadOutcome,
  StorageListOptions,
  StorageListPage,
  StorageReadOptions,
} from "../storage-adapters/storage-adapter.ts";
import { closeEnd, entryKey, openRoot, pruneEmptyDirs, userSteps, type WalkEnd, walk } from "./beneath.ts";
import { listPage } from "./dir-listing.ts";
import { holdsFile, keepFolder } from "./dir-visibility.ts";
import { isNamedEntry, judgeEntry, LINK_IS_ENTRY, locate, renameEntry, unlinkEntry, withRoot } from "./disk-entries.ts";
import { removeEmptyFolder } from "./empty-folders.ts";
import { fileRangeStream } from "./file-range-stream.ts";
import { failFromFs } from "./fs-errors.ts";
import type { HostContext } from "./host-context.ts";
import { identity } from "./meta-store.ts";
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
