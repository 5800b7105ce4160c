/**
 * Folders a cap makes and removes (StorageAdapter.makeDir, removeDir). A
 * folder made here carries a {@link FOLDER_MARKER} so it exists while empty,
 * as R2's `dir/` marker key keeps one there.
 */
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { closeEnd, inDir, openRoot, userSteps, walk } from "./beneath.ts";
import { FOLDER_MARKER, holdsFile, isMarked, keepFolder, mark } from "./dir-visibility.ts";
import { removeEmptyFolder } from "./empty-folders.ts";
import { errnoOf, failFromFs } from "./fs-errors.ts";
import type { HostContext } from "./host-context.ts";
import { unlink } from "./sync-fs.ts";

/** The folder at `segments` and every missing one above it (the cap's root levels too), marked. */
export async function makeFolder(ctx: HostContext, levels: string[][], segments: string[]): Promise<Result<null>> {
  if (segments.length === 0) return refuse("needsFolderName");
  try {
    const root = await openRoot(ctx.base, levels, ctx.dirMode);
    if (!root.ok) return root;
    if (root.value.kind !== "root") return refuse("fileDirectoryClash");
    try {
      const mkdirs = { mode: ctx.dirMode, final: true };
      const end = await walk(root.value.chain, userSteps(segments), { followFinal: true, mkdirs });
      if (!end.ok) return end;
      try {
        if (end.value.kind !== "dir") return refuse("fileDirectoryClash");
        await mark(end.value.chain.top, ctx.fileMode);
        await end.value.chain.top.sync();
        return ok(null);
      } finally {
        await closeEnd(end.value);
      }
    } finally {
      await root.value.release();
    }
  } catch (error) {
    return failFromFs(error, "writing");
  }
}

/**
 * Removes the folder at `segments` if a cap sees nothing in it; the folder
 * holding it stays. A link there is an entry, removed as a file is (`rm`).
 */
export async function removeFolder(ctx: HostContext, levels: string[][], segments: string[]): Promise<Result<null>> {
  if (segments.length === 0) return refuse("needsFolderName");
  try {
    const root = await openRoot(ctx.base, levels, null);
    if (!root.ok) return root;
    if (root.value.kind !== "root") return refuse("notFound");
    try {
      const end = await walk(root.value.chain, userSteps(segments), { followFinal: false });
      if (!end.ok) return end;
      const found = end.value;
      try {
        if (found.kind === "file" || found.kind === "link") return refuse("isFile");
        if (found.kind !== "dir") return refuse("notFound");
        const marked = await isMarked(found.chain.top);
        // Unmarked, it exists only through what it holds.
        if (!marked) return (await holdsFile(found.chain)) ? refuse("folderNotEmpty") : refuse("notFound");
        await unlink(inDir(found.chain.top, FOLDER_MARKER)).catch((error) => {
          if (errnoOf(error) !== "ENOENT") throw error;
        });
        // Anything a cap sees (or that appeared meanwhile) keeps it: marked again, and refused.
        if ((await holdsFile(found.chain)) || !(await removeEmptyFolder(root.value.chain, segments))) {
          await mark(found.chain.top, ctx.fileMode);
          return refuse("folderNotEmpty");
        }
        await found.chain.pop();
        await keepFolder(found.chain, ctx.base, ctx.fileMode);
        return ok(null);
      } finally {
        await closeEnd(found);
      }
    } finally {
      await root.value.release();
    }
  } catch (error) {
    return failFromFs(error, "writing");
  }
}
