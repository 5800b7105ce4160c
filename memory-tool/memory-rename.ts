import type { CapFailure } from "../shared/result.ts";
import { childPath, MEMORY_MOUNT, toCapPath, type MemoryPath } from "./memory-path.ts";
import { done, refuse, refused, type MemoryResult } from "./memory-result.ts";
import { MAX_TREE_ENTRIES, walkTree } from "./memory-tree.ts";
import type { TextFiles } from "./text-files.ts";

/**
 * `rename`: moves a file, or a directory file by file (not atomic: a failure
 * part-way is reported with how far it got). Both paths must be inside
 * `/memories`, neither may be the root, and the destination must not exist;
 * each file move also refuses to overwrite, so a destination created
 * concurrently is never clobbered.
 */
export async function renameCommand(files: TextFiles, rawOld: string, rawNew: string): Promise<MemoryResult> {
  const from = toCapPath(rawOld);
  if (!from.ok) return refused(from.error, rawOld);
  const to = toCapPath(rawNew);
  if (!to.ok) return refused(to.error, rawNew);
  const [src, dst] = [from.value, to.value];
  if (src.rel.segments.length === 0) return refuse("forbidden", `Cannot rename the ${MEMORY_MOUNT} directory itself`);
  if (dst.rel.segments.length === 0) return refuse("conflict", `The destination ${dst.shown} already exists`);

  const existing = await files.stat(dst.rel.text);
  if (existing.ok) return refuse("conflict", `The destination ${dst.shown} already exists`);
  if (existing.error.code !== "not_found") return refused(existing.error, dst.shown);

  const source = await files.stat(src.rel.text);
  if (!source.ok) return source.error.code === "not_found" ? refuse("not_found", `The path ${src.shown} does not exist`) : refused(source.error, src.shown);

  if (source.value.type === "file") {
    const moved = await files.move(src.rel.text, dst.rel.text);
    if (!moved.ok) return movedFailure(files, moved.error, src.shown, dst);
    return done(`Successfully renamed ${src.shown} to ${dst.shown}`);
  }

  if (dst.rel.text.startsWith(`${src.rel.text}/`)) {
    return refuse("invalid_path", `Cannot move the directory ${src.shown} into itself (${dst.shown})`);
  }
  const tree = await walkTree(files, src.rel.text, { maxEntries: MAX_TREE_ENTRIES, skipHidden: false });
  if (!tree.ok) return refused(tree.error, src.shown);
  if (!tree.value.complete) {
    return refuse("too_large", `${src.shown} holds more than ${MAX_TREE_ENTRIES} entries; nothing was moved. Rename its subdirectories one by one.`);
  }
  const targets = tree.value.entries.filter((e) => e.type === "file");
  let moved = 0;
  for (const file of targets) {
    const result = await files.move(childPath(src.rel, file.path), childPath(dst.rel, file.path));
    if (!result.ok) {
      return refused(
        { code: result.error.code, message: `${result.error.message}; moved ${moved} of ${targets.length} files to ${dst.shown} before stopping` },
        src.shown,
      );
    }
    moved++;
  }
  return done(`Successfully renamed ${src.shown} to ${dst.shown}`);
}

/** A `conflict` from the move is the destination appearing meanwhile, or a file where a folder is needed. */
async function movedFailure(files: TextFiles, error: CapFailure, srcShown: string, dst: MemoryPath): Promise<MemoryResult> {
  if (error.code === "not_found") return refuse("not_found", `The path ${srcShown} does not exist`);
  if (error.code === "conflict" && (await files.stat(dst.rel.text)).ok) return refuse("conflict", `The destination ${dst.shown} already exists`);
  return refused(error, dst.shown);
}
