import { toCapPath } from "./memory-path.ts";
import { memoryRefusal } from "./memory-refusals.ts";
import { done, type MemoryResult, refuse, refused } from "./memory-result.ts";
import type { TextFiles } from "./text-files.ts";

/**
 * `create`: writes `file_text`, replacing an existing file, as the memory
 * tool's documentation specifies ("create or overwrite"). Folders need no
 * creating: they exist while they hold a file.
 */
export async function createCommand(files: TextFiles, rawPath: string, fileText: string): Promise<MemoryResult> {
  const path = toCapPath(rawPath);
  if (!path.ok) return refused(path.error, rawPath);
  if (path.value.rel.segments.length === 0)
    return refuse(memoryRefusal("isDirectoryNotFile", { shown: path.value.shown }));
  const written = await files.writeText(path.value.rel.text, fileText);
  if (!written.ok) return refused(written.error, rawPath);
  return done(`File created successfully at: ${path.value.shown}`);
}
