/**
 * Folders that hold no file do not exist for a cap (as on R2, where a
 * "folder" is only a shared key prefix), yet on disk they can block a file of
 * the same name. They arise through the API, not only by hand: pruning stops
 * at a cap's root, so a child cap's root folder stays when its last file goes,
 * and a write refused after its root folder was made leaves that folder. So a
 * write or move onto such a folder removes it first, as R2 would simply
 * write. Only empty folders go: rmdir removes nothing else, and a folder
 * holding anything (a file, a link, a write's temp) is left, and refused.
 */
import { constants } from "node:fs";
import { readdir } from "node:fs/promises";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import { closeEnd, type DirChain, heldPath, inDir, OPEN_NOFOLLOW, userSteps, walk } from "./beneath.ts";
import { ENTRY_BUDGET, MAX_TREE_DEPTH } from "./dir-visibility.ts";
import { type FileHandle, open, rmdir } from "./sync-fs.ts";

/**
 * Removes the folder the holder named by `segments` beneath `root` if it
 * holds nothing but empty folders. Never the root itself, never a folder
 * reached by a link at its last name. True if it is gone.
 *
 * @example
 * if (found.kind === "dir" && (await removeEmptyFolder(root, ["notes"]))) retry();
 */
export async function removeEmptyFolder(root: DirChain, segments: readonly string[]): Promise<boolean> {
  const end = await walk(root, userSteps(segments), { followFinal: false });
  if (!end.ok) return false;
  try {
    if (end.value.kind !== "dir") return false;
    // The top of the chain, with the folder holding it, if the holder's own name reached it (not a link, not the root).
    const [target] = end.value.chain.prunable();
    if (!target || target.name !== segments[segments.length - 1]) return false;
    return await removeTree(target.parent, target.name, 0, { left: ENTRY_BUDGET });
  } finally {
    await closeEnd(end.value);
  }
}

/**
 * Depth first: every sub-folder, then the folder. False at the first entry
 * that is not an empty folder, and past the bounds holdsFile (stat) uses, so
 * a tree too big to look at is refused here exactly when stat shows it.
 */
async function removeTree(parent: FileHandle, name: string, depth: number, budget: { left: number }): Promise<boolean> {
  if (depth > MAX_TREE_DEPTH) return false;
  let dir: FileHandle;
  try {
    // O_NOFOLLOW: a link is never entered; O_DIRECTORY: a file is never opened.
    dir = await open(inDir(parent, name), OPEN_NOFOLLOW | constants.O_DIRECTORY);
  } catch {
    return false;
  }
  try {
    for (const raw of await readdir(heldPath(dir), { encoding: "buffer" })) {
      const child = decodeUtf8Strict(raw);
      if (child === null || --budget.left < 0) return false;
      if (!(await removeTree(dir, child, depth + 1, budget))) return false;
    }
  } catch {
    return false;
  } finally {
    await dir.close();
  }
  // Fails (and so refuses) if anything appeared meanwhile.
  return rmdir(inDir(parent, name)).then(
    () => true,
    () => false,
  );
}
