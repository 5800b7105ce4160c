import type { CapFailure } from "../shared/result.ts";
import { childPath, toCapPath } from "./memory-path.ts";
import { memoryRefusal, stoppedAfter } from "./memory-refusals.ts";
import { capError, done, type MemoryResult, referenceError } from "./memory-result.ts";
import { MAX_TREE_ENTRIES, walkTree } from "./memory-tree.ts";
import type { MemoryFiles } from "./text-files.ts";

/**
 * `delete`: a file, or a directory with everything in it, as the
 * reference's `rm -r`: each file deleted through the cap, then each emptied
 * folder removed, deepest first, the directory itself last. The root is
 * refused however it is spelled: `/memories` and `/memories/` parse to the
 * root and are caught here, `/memories/.` never parses at all.
 *
 * A link to a folder (disk) is deleted as `rm -r` does: the link goes, the
 * folder it leads to keeps its files. The cap cannot tell a link from a
 * folder, but it deletes a link as one entry and refuses (`conflict`) to
 * delete a folder that way; so each folder is first deleted as one entry,
 * and emptied file by file only when that is refused. On R2, which has no
 * links, that first try is always refused.
 */
export async function deleteCommand(files: MemoryFiles, rawPath: string): Promise<MemoryResult> {
  const path = toCapPath(rawPath);
  if (!path.ok) return capError(path.error, rawPath);
  const { rel, shown } = path.value;
  if (rel.segments.length === 0) return referenceError(memoryRefusal("cannotDeleteMount"));
  const stat = await files.stat(rel.text);
  if (!stat.ok)
    return stat.error.code === "not_found"
      ? referenceError(memoryRefusal("doesNotExist", { shown }))
      : capError(stat.error, shown);

  const whole = await files.delete(rel.text);
  if (whole.ok) return done(`Successfully deleted ${shown}`);
  if (whole.error.code === "not_found") return referenceError(memoryRefusal("doesNotExist", { shown }));
  if (stat.value.type === "file" || whole.error.code !== "conflict") return capError(whole.error, shown);

  const tree = await walkTree(files, rel.text, { maxEntries: MAX_TREE_ENTRIES, skipHidden: false });
  if (!tree.ok) return capError(tree.error, shown);
  if (!tree.value.complete) {
    return referenceError(memoryRefusal("tooManyToDelete", { shown, max: MAX_TREE_ENTRIES }));
  }
  let deleted = 0;
  // Real folders met on the way, each before its contents: removed in reverse once emptied, children first.
  const folders = [rel.text];
  // Entries come depth first, each folder before its contents: once a folder went as one entry (a link), skip what the walk saw through it.
  let gone: string | null = null;
  for (const entry of tree.value.entries) {
    if (gone !== null && entry.path.startsWith(`${gone}/`)) continue;
    gone = null;
    const removed = await files.delete(childPath(rel, entry.path));
    if (entry.type === "dir") {
      // ok: a link, gone; conflict: a real folder, emptied below; not_found: nothing left in it.
      if (removed.ok || removed.error.code === "not_found") gone = entry.path;
      else if (removed.error.code !== "conflict") return stopped(removed.error, deleted, shown);
      else folders.push(childPath(rel, entry.path));
      continue;
    }
    // Gone already (another writer deleted it): that is what was asked.
    if (!removed.ok && removed.error.code !== "not_found") return stopped(removed.error, deleted, shown);
    deleted++;
  }
  for (const folder of folders.reverse()) {
    const removed = await files.removeFolder(folder);
    // not_found: removed meanwhile; a conflict is a file written into it meanwhile, kept and reported.
    if (!removed.ok && removed.error.code !== "not_found") return stopped(removed.error, deleted, shown);
  }
  return done(`Successfully deleted ${shown}`);
}

function stopped(error: CapFailure, deleted: number, shown: string): MemoryResult {
  return capError(stoppedAfter(error, `deleted ${deleted} files`), shown);
}
