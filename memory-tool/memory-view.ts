import { type MemoryPath, toCapPath, withoutTrailingSlash } from "./memory-path.ts";
import { memoryRefusal } from "./memory-refusals.ts";
import {
  capError,
  done,
  formatSize,
  MAX_LINES,
  type MemoryResult,
  numberedLine,
  referenceError,
} from "./memory-result.ts";
import { walkTree } from "./memory-tree.ts";
import { MAX_TEXT_BYTES, type TextFiles } from "./text-files.ts";
import { lineOffset, linesFrom, splitLineCount } from "./text-lines.ts";

/** The reference shows two levels; the walk beneath them (for directory sizes) stops here. */
export const VIEW_MAX_ENTRIES = 1000;
const VIEW_DEPTH = 2;
/**
 * Lines one `view` numbers: a memory file is read whole, but numbering a
 * million lines is a second of CPU and more than any context holds. Larger
 * files are viewed a range at a time.
 */
export const VIEW_MAX_LINES = 50_000;

/**
 * `view`: a directory as `size<TAB>path` lines two levels deep (hidden items
 * and `node_modules` excluded), or a file with numbered lines, optionally a `[start, end]` range
 * where `end` -1 means the last line.
 *
 * A directory's size is the total of the files beneath it: the vault has no
 * directory inodes, and this is the number a reader can use.
 */
export async function viewCommand(
  files: TextFiles,
  rawPath: string,
  viewRange: [number, number] | null,
): Promise<MemoryResult> {
  const path = toCapPath(rawPath);
  if (!path.ok) return capError(path.error, rawPath);
  const stat = await files.stat(path.value.rel.text);
  if (!stat.ok) return stat.error.code === "not_found" ? missing(path.value) : capError(stat.error, rawPath);
  return stat.value.type === "dir" ? viewDirectory(files, path.value) : viewFile(files, path.value, viewRange);
}

async function viewDirectory(files: TextFiles, path: MemoryPath): Promise<MemoryResult> {
  const tree = await walkTree(files, path.rel.text, { maxEntries: VIEW_MAX_ENTRIES, skipHidden: true });
  if (!tree.ok) return tree.error.code === "not_found" ? missing(path) : capError(tree.error, path.shown);
  const base = withoutTrailingSlash(path.shown);
  const lines = [`${formatSize(tree.value.size)}\t${path.shown}`];
  for (const entry of tree.value.entries) {
    if (entry.depth > VIEW_DEPTH) continue;
    lines.push(`${formatSize(entry.size)}\t${base}/${entry.path}${entry.type === "dir" ? "/" : ""}`);
  }
  if (!tree.value.complete)
    lines.push(`(listing stopped after ${VIEW_MAX_ENTRIES} entries; view a subdirectory to see more)`);
  return done(
    `Here're the files and directories up to 2 levels deep in ${path.shown}, excluding hidden items and node_modules:\n${lines.join("\n")}`,
  );
}

async function viewFile(files: TextFiles, path: MemoryPath, viewRange: [number, number] | null): Promise<MemoryResult> {
  const file = await files.readText(path.rel.text, MAX_TEXT_BYTES);
  if (!file.ok) return file.error.code === "not_found" ? missing(path) : capError(file.error, path.shown);
  const text = file.value.text;
  const total = splitLineCount(text);
  if (total > MAX_LINES) return referenceError(memoryRefusal("overLineLimit", { shown: path.shown }));
  // The reference's slicing, kept exactly (Python's, as Array.slice): start clamps to 1, -1 ends at the last line.
  const start = viewRange === null ? 0 : Math.min(Math.max(1, viewRange[0]) - 1, total);
  const rawEnd = viewRange === null || viewRange[1] === -1 ? total : viewRange[1];
  const end = Math.min(rawEnd < 0 ? Math.max(0, total + rawEnd) : rawEnd, total);
  const count = Math.max(0, end - start);
  if (count > VIEW_MAX_LINES) {
    return referenceError(memoryRefusal("viewTooLong", { shown: path.shown, total, max: VIEW_MAX_LINES }));
  }
  const numbered = linesFrom(text, lineOffset(text, start), count).map((line, i) => numberedLine(start + i + 1, line));
  return done(`Here's the content of ${path.shown} with line numbers:\n${numbered.join("\n")}`);
}

function missing(path: MemoryPath): MemoryResult {
  return referenceError(memoryRefusal("doesNotExistGiveValid", { shown: path.shown }));
}
