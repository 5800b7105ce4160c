import { toCapPath } from "./memory-path.ts";
import { memoryRefusal } from "./memory-refusals.ts";
import { capError, done, type MemoryResult, referenceError } from "./memory-result.ts";
import type { TextFiles } from "./text-files.ts";

/**
 * `create`: writes `file_text`, replacing an existing file, as the memory
 * tool's documentation specifies ("create or overwrite"). Folders need no
 * creating: they exist while they hold a file.
 */
export async function createCommand(files: TextFiles, rawPath: string, fileText: string): Promise<MemoryResult> {
  const path = toCapPath(rawPath);
  if (!path.ok) return capError(path.error, rawPath);
  if (path.value.rel.segments.length === 0)
    return referenceError(memoryRefusal("isDirectoryNotFile", { shown: path.value.shown }));
  const written = await files.writeText(path.value.rel.text, fileText);
  if (!written.ok) return capError(written.error, rawPath);
  return done(`File created successfully at: ${path.value.shown}`);
}
