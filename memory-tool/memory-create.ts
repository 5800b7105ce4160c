import { toCapPath } from "./memory-path.ts";
import { memoryRefusal } from "./memory-refusals.ts";
import { capError, done, type MemoryResult, referenceError } from "./memory-result.ts";
import type { MemoryFiles } from "./text-files.ts";

/**
 * `create`: writes `file_text` to a new file, with any missing folders above
 * it. Something already at the path, file or folder (the root included), is
 * refused as the reference refuses it (its `open(…, "wx")`): a memory is never
 * silently replaced. The check and the write are one (`If-None-Match: *`), so
 * a file created concurrently is not clobbered either.
 */
export async function createCommand(files: MemoryFiles, rawPath: string, fileText: string): Promise<MemoryResult> {
  const path = toCapPath(rawPath);
  if (!path.ok) return capError(path.error, rawPath);
  const { rel, shown } = path.value;
  if (rel.segments.length === 0) return referenceError(memoryRefusal("fileExists", { shown }));
  const written = await files.writeText(rel.text, fileText, { ifNoneMatch: "*" });
  if (written.ok) return done(`File created successfully at: ${shown}`);
  if (written.error.code === "precondition_failed") return referenceError(memoryRefusal("fileExists", { shown }));
  // A conflict is a folder at the path, or a file where a folder above it should be.
  if (written.error.code === "conflict") {
    const there = await files.stat(rel.text);
    if (there.ok && there.value.type === "dir") return referenceError(memoryRefusal("fileExists", { shown }));
  }
  return capError(written.error, rawPath);
}
