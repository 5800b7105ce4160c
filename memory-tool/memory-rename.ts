import type { CapFailure } from "../shared/result.ts";
import { childPath, type MemoryPath, toCapPath } from "./memory-path.ts";
import { memoryRefusal, stoppedAfter } from "./memory-refusals.ts";
import { capError, done, type MemoryResult, referenceError } from "./memory-result.ts";
import { MAX_TREE_ENTRIES, walkTree } from "./memory-tree.ts";
import type { MemoryFiles, TextFiles } from "./text-files.ts";

/**
 * `rename`: moves a file, or a directory file by file, its folders (empty
 * ones too) made at the destination and the emptied ones removed at the
 * source, as the reference's one `rename(2)` leaves them (not atomic: a
 * failure part-way is reported with how far it got). Both paths must be inside
 * `/memories`, neither may be the root, and the destination must not exist;
 * each file move also refuses to overwrite, so a destination created
 * concurrently is never clobbered.
 *
 * A link to a folder (disk) moves as `mv` moves it: the link itself, in one
 * atomic rename; the folder it leads to is untouched. The cap cannot tell a
 * link from a folder, but it moves a link as one entry and refuses
 * (`conflict`) to move a folder; so each folder is first moved as one entry,
 * and file by file only when that is refused (always, on R2).
 */
export async function renameCommand(files: MemoryFiles, rawOld: string, rawNew: string): Promise<MemoryResult> {
  const from = toCapPath(rawOld);
  if (!from.ok) return capError(from.error, rawOld);
  const to = toCapPath(rawNew);
  if (!to.ok) return capError(to.error, rawNew);
  const [src, dst] = [from.value, to.value];
  if (src.rel.segments.length === 0) return referenceError(memoryRefusal("cannotRenameMount"));
  if (dst.rel.segments.length === 0) return referenceError(memoryRefusal("destinationExists", { shown: dst.shown }));

  const existing = await files.stat(dst.rel.text);
  if (existing.ok) return referenceError(memoryRefusal("destinationExists", { shown: dst.shown }));
  if (existing.error.code !== "not_found") return capError(existing.error, dst.shown);

  const source = await files.stat(src.rel.text);
  if (!source.ok)
    return source.error.code === "not_found"
      ? referenceError(memoryRefusal("doesNotExist", { shown: src.shown }))
      : capError(source.error, src.shown);

  if (source.value.type === "file") {
    const moved = await files.move(src.rel.text, dst.rel.text);
    if (!moved.ok) return movedFailure(files, moved.error, src.shown, dst);
    return done(`Successfully renamed ${src.shown} to ${dst.shown}`);
  }

  if (dst.rel.text.startsWith(`${src.rel.text}/`)) {
    return referenceError(memoryRefusal("moveIntoItself", { from: src.shown, to: dst.shown }));
  }
  const whole = await files.move(src.rel.text, dst.rel.text);
  if (whole.ok) return done(`Successfully renamed ${src.shown} to ${dst.shown}`);
  if (whole.error.code !== "conflict") return movedFailure(files, whole.error, src.shown, dst);
  const tree = await walkTree(files, src.rel.text, { maxEntries: MAX_TREE_ENTRIES, skipHidden: false });
  if (!tree.ok) return capError(tree.error, src.shown);
  if (!tree.value.complete) {
    return referenceError(memoryRefusal("tooManyToMove", { shown: src.shown, max: MAX_TREE_ENTRIES }));
  }
  let moved = 0;
  const stopped = (error: CapFailure) =>
    capError(stoppedAfter(error, `moved ${moved} files to ${dst.shown}`), src.shown);
  // Real folders of the source, each before its contents: emptied by the moves, removed in reverse, children first.
  const folders = [src.rel.text];
  const made = await files.makeFolder(dst.rel.text);
  if (!made.ok) return movedFailure(files, made.error, src.shown, dst);
  // Entries come depth first, each folder before its contents: once a folder moved as one entry (a link), skip what the walk saw through it.
  let gone: string | null = null;
  for (const entry of tree.value.entries) {
    if (gone !== null && entry.path.startsWith(`${gone}/`)) continue;
    gone = null;
    const result = await files.move(childPath(src.rel, entry.path), childPath(dst.rel, entry.path));
    if (entry.type === "dir") {
      // ok: a link, moved; conflict: a real folder, moved file by file below; not_found: nothing left in it.
      if (result.ok || result.error.code === "not_found") gone = entry.path;
      else if (result.error.code !== "conflict") return stopped(result.error);
      else {
        const folder = await files.makeFolder(childPath(dst.rel, entry.path));
        if (!folder.ok) return stopped(folder.error);
        folders.push(childPath(src.rel, entry.path));
      }
      continue;
    }
    if (!result.ok) return stopped(result.error);
    moved++;
  }
  for (const folder of folders.reverse()) {
    const removed = await files.removeFolder(folder);
    // not_found: removed meanwhile; a conflict is a file written into it meanwhile, kept and reported.
    if (!removed.ok && removed.error.code !== "not_found") return stopped(removed.error);
  }
  return done(`Successfully renamed ${src.shown} to ${dst.shown}`);
}

/** A `conflict` from the move is the destination appearing meanwhile, or a file where a folder is needed. */
async function movedFailure(
  files: TextFiles,
  error: CapFailure,
  srcShown: string,
  dst: MemoryPath,
): Promise<MemoryResult> {
  if (error.code === "not_found") return referenceError(memoryRefusal("doesNotExist", { shown: srcShown }));
  if (error.code === "conflict" && (await files.stat(dst.rel.text)).ok)
    return referenceError(memoryRefusal("destinationExists", { shown: dst.shown }));
  return capError(error, dst.shown);
}
