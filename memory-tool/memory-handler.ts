import { createCommand } from "./memory-create.ts";
import { deleteCommand } from "./memory-delete.ts";
import { insertCommand, strReplaceCommand } from "./memory-edit.ts";
import { parseMemoryInput } from "./memory-input.ts";
import { renameCommand } from "./memory-rename.ts";
import { capError, type MemoryResult } from "./memory-result.ts";
import { viewCommand } from "./memory-view.ts";
import type { MemoryFiles } from "./text-files.ts";

export type { MemoryResult } from "./memory-result.ts";

/** Runs one `memory_20250818` tool input and returns its result; never throws for a refusal. */
export type MemoryHandler = (input: unknown) => Promise<MemoryResult>;

/**
 * The memory tool (`memory_20250818`) over a cap: `/memories` is the cap's
 * root. Written once against {@link MemoryFiles}, so the worker route and the
 * SDK run the same code and give the same strings.
 *
 * @example
 * const memory = createMemoryHandler(files);
 * const { text, isError } = await memory({ command: "view", path: "/memories" });
 * // → tool_result { content: text, is_error: isError }
 */
export function createMemoryHandler(files: MemoryFiles): MemoryHandler {
  return async (input) => {
    const parsed = parseMemoryInput(input);
    if (!parsed.ok) return capError(parsed.error);
    const c = parsed.value;
    switch (c.command) {
      case "view":
        return viewCommand(files, c.path, c.view_range);
      case "create":
        return createCommand(files, c.path, c.file_text);
      case "str_replace":
        return strReplaceCommand(files, c.path, c.old_str, c.new_str);
      case "insert":
        return insertCommand(files, c.path, c.insert_line, c.insert_text);
      case "delete":
        return deleteCommand(files, c.path);
      case "rename":
        return renameCommand(files, c.old_path, c.new_path);
    }
  };
}
