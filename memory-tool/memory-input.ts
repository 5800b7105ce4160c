import { failed, ok, type Result } from "../shared/result.ts";
import { quoteInput } from "./memory-path.ts";
import { memoryRefusal } from "./memory-refusals.ts";

/** The six commands of `memory_20250818`, as the model sends them. Paths are still raw. */
export type MemoryCommand =
  | { command: "view"; path: string; view_range: [number, number] | null }
  | { command: "create"; path: string; file_text: string }
  | { command: "str_replace"; path: string; old_str: string; new_str: string }
  | { command: "insert"; path: string; insert_line: unknown; insert_text: string }
  | { command: "delete"; path: string }
  | { command: "rename"; old_path: string; new_path: string };

const COMMANDS = ["view", "create", "str_replace", "insert", "delete", "rename"] as const;

/**
 * Checks the shape of a tool input. Unknown extra fields are ignored, as the
 * reference does; missing or mistyped ones are a `bad_request`. `insert_line`
 * is judged by the insert command, which reports it in the reference's words.
 *
 * @example
 * parseMemoryInput({ command: "view", path: "/memories" }) // ok
 * parseMemoryInput({ command: "format" })                  // fail: bad_request "Unknown command: format"
 */
export function parseMemoryInput(input: unknown): Result<MemoryCommand> {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return failed(memoryRefusal("inputNotObject"));
  }
  const fields = input as Record<string, unknown>;
  const command = fields.command;
  if (!(COMMANDS as readonly unknown[]).includes(command))
    return failed(memoryRefusal("unknownCommand", { quoted: quoteInput(command) }));

  const strings = (...names: string[]): Result<Record<string, string>> => {
    const out: Record<string, string> = {};
    for (const name of names) {
      const value = fields[name];
      if (typeof value !== "string") return failed(memoryRefusal("notAString", { field: name }));
      out[name] = value;
    }
    return ok(out);
  };

  switch (command as MemoryCommand["command"]) {
    case "view": {
      const s = strings("path");
      if (!s.ok) return s;
      const range = fields.view_range;
      if (range === undefined || range === null) return ok({ command: "view", path: s.value.path!, view_range: null });
      if (!Array.isArray(range) || range.length !== 2 || !range.every((n) => Number.isSafeInteger(n))) {
        return failed(memoryRefusal("badViewRange", { quoted: quoteInput(range) }));
      }
      return ok({ command: "view", path: s.value.path!, view_range: [range[0] as number, range[1] as number] });
    }
    case "create": {
      const s = strings("path", "file_text");
      return s.ok ? ok({ command: "create", path: s.value.path!, file_text: s.value.file_text! }) : s;
    }
    case "str_replace": {
      const s = strings("path", "old_str", "new_str");
      return s.ok
        ? ok({ command: "str_replace", path: s.value.path!, old_str: s.value.old_str!, new_str: s.value.new_str! })
        : s;
    }
    case "insert": {
      const s = strings("path", "insert_text");
      return s.ok
        ? ok({
            command: "insert",
            path: s.value.path!,
            insert_line: fields.insert_line,
            insert_text: s.value.insert_text!,
          })
        : s;
    }
    case "delete": {
      const s = strings("path");
      return s.ok ? ok({ command: "delete", path: s.value.path! }) : s;
    }
    case "rename": {
      const s = strings("old_path", "new_path");
      return s.ok ? ok({ command: "rename", old_path: s.value.old_path!, new_path: s.value.new_path! }) : s;
    }
  }
}
