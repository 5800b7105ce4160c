import { childPath, toCapPath, MEMORY_MOUNT } from "./memory-path.ts";
import { done, refuse, refused, type MemoryResult } from "./memory-result.ts";
import { MAX_TREE_ENTRIES, walkTree } from "./memory-tree.ts";
import type { TextFiles } from "./text-files.ts";

/**
 * `delete`: a file, or a directory with everything in it (each file deleted
 * through the cap; the directory vanishes with its last file). The root is
 * refused however it is spelled: `/memories` and `/memories/` parse to the
 * root and are caught here, `/memories/.` never parses at all.
 */
export async function deleteCommand(files: TextFiles, rawPath: string): Promise<MemoryResult> {
  const path = toCapPath(rawPath);
  if (!path.ok) return refused(path.error, rawPath);
  const { rel, shown } = path.value;
  if (rel.segments.length === 0) return refuse("forbidden", `Cannot delete the ${MEMORY_MOUNT} directory itself`);
  const stat = await files.stat(rel.text);
  if (!stat.ok) return stat.error.code === "not_found" ? refuse("not_found", `The path ${shown} does not exist`) : refused(stat.error, shown);

  if (stat.value.type === "file") {
    const removed = await files.delete(rel.text);
    if (!removed.ok) return removed.error.code === "not_found" ? refuse("not_found", `The path ${shown} does not exist`) : refused(removed.error, shown);
    return done(`Successfully deleted ${shown}`);
  }

  const tree = await walkTree(files, rel.text, { maxEntries: MAX_TREE_ENTRIES, skipHidden: false });
  if (!tree.ok) return refused(tree.error, shown);
  if (!tree.value.complete) {
    return refuse("too_large", `${shown} holds more than ${MAX_TREE_ENTRIES} entries; nothing was deleted. Delete its subdirectories first.`);
  }
  const targets = tree.value.entries.filter((e) => e.type === "file");
  let deleted = 0;
  for (const file of targets) {
    const removed = await files.delete(childPath(rel, file.path));
    // Gone already (another writer deleted it): that is what was asked.
    if (!removed.ok && removed.error.code !== "not_found") {
      return refused(
        { code: removed.error.code, message: `${removed.error.message}; deleted ${deleted} of ${targets.length} files before stopping` },
        shown,
      );
    }
    deleted++;
  }
  return done(`Successfully deleted ${shown}`);
}
