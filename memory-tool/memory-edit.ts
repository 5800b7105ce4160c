import type { Result } from "../shared/result.ts";
import { quoteInput, toCapPath, type MemoryPath } from "./memory-path.ts";
import { done, numberedLine, refuse, refused, type MemoryResult } from "./memory-result.ts";
import { MAX_TEXT_BYTES, type TextFiles } from "./text-files.ts";

/** How often an edit is recomputed when another writer got in between its read and its write. */
export const EDIT_ATTEMPTS = 3;

/** What an edit makes of the file it read: new text and the result to report, or an error to report as is. */
type EditOutcome = { text: string; result: MemoryResult } | MemoryResult;

/**
 * Read, edit, write back only if the file is unchanged (`If-Match` with the
 * etag that was read). Another writer in between makes the write fail with
 * `precondition_failed`; the edit is then recomputed on the new content, so
 * two concurrent edits never silently drop one another.
 */
async function editFile(files: TextFiles, rawPath: string, edit: (text: string, path: MemoryPath) => EditOutcome): Promise<MemoryResult> {
  const path = toCapPath(rawPath);
  if (!path.ok) return refused(path.error, rawPath);
  const p = path.value;
  if (p.rel.segments.length === 0) return refuse("conflict", `The path ${p.shown} is not a file.`);
  for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt++) {
    const file = await files.readText(p.rel.text, MAX_TEXT_BYTES);
    if (!file.ok) return readFailure(file, p);
    const outcome = edit(file.value.text, p);
    if (!("result" in outcome)) return outcome;
    const written = await files.writeText(p.rel.text, outcome.text, { ifMatch: file.value.etag });
    if (written.ok) return outcome.result;
    if (written.error.code !== "precondition_failed") return refused(written.error, p.shown);
  }
  return refuse("precondition_failed", `The file ${p.shown} kept changing while it was being edited; no change was made. View it and try again.`);
}

function readFailure(file: Result<unknown> & { ok: false }, p: MemoryPath): MemoryResult {
  if (file.error.code === "not_found") return refuse("not_found", `The path ${p.shown} does not exist. Please provide a valid path.`);
  if (file.error.code === "conflict") return refuse("conflict", `The path ${p.shown} is not a file.`);
  return refused(file.error, p.shown);
}

/**
 * `str_replace`: `old_str` must occur exactly once (counted without overlaps,
 * as Python's `str.count`); the result shows the edited lines in context.
 */
export function strReplaceCommand(files: TextFiles, rawPath: string, oldStr: string, newStr: string): Promise<MemoryResult> {
  return editFile(files, rawPath, (content, p) => {
    if (oldStr === "") return refuse("bad_request", `No replacement was performed, old_str is empty; give the exact text to replace in ${p.shown}.`);
    const count = countOccurrences(content, oldStr);
    if (count === 0) {
      return refuse("bad_request", `No replacement was performed, old_str \`${oldStr}\` did not appear verbatim in ${p.shown}.`);
    }
    if (count > 1) {
      return refuse(
        "bad_request",
        `No replacement was performed. Multiple occurrences of old_str \`${oldStr}\` in lines: ${matchingLines(content, oldStr).join(", ")}. Please ensure it is unique`,
      );
    }
    const at = content.indexOf(oldStr);
    // Slicing, not String.replace: a `$&` in new_str must stay literal.
    const text = content.slice(0, at) + newStr + content.slice(at + oldStr.length);
    const changed = lineCount(content.slice(0, at));
    const lines = text.split("\n");
    const from = Math.max(0, changed - 2);
    const to = Math.min(lines.length, changed + 3);
    const snippet = lines.slice(from, to).map((line, i) => numberedLine(from + i + 1, line));
    return {
      text,
      result: done(`The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${snippet.join("\n")}`),
    };
  });
}

/** `insert`: `insert_text` becomes line `insert_line + 1` (0 inserts at the top); the file ends with a newline. */
export function insertCommand(files: TextFiles, rawPath: string, insertLine: unknown, insertText: string): Promise<MemoryResult> {
  return editFile(files, rawPath, (content, p) => {
    const lines = content.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    if (typeof insertLine !== "number" || !Number.isSafeInteger(insertLine) || insertLine < 0 || insertLine > lines.length) {
      return refuse("bad_request", `Invalid \`insert_line\` parameter: ${quoteInput(insertLine)}. It should be within the range [0, ${lines.length}].`);
    }
    lines.splice(insertLine, 0, insertText.replace(/\n+$/, ""));
    let text = lines.join("\n");
    if (!text.endsWith("\n")) text += "\n";
    return { text, result: done(`The file ${p.shown} has been edited.`) };
  });
}

function countOccurrences(content: string, needle: string): number {
  let count = 0;
  for (let at = content.indexOf(needle); at !== -1; at = content.indexOf(needle, at + needle.length)) count++;
  return count;
}

/** 1-based lines where each occurrence starts, overlapping ones included, as the reference reports them. */
function matchingLines(content: string, needle: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let counted = 0;
  for (let at = content.indexOf(needle); at !== -1; at = content.indexOf(needle, at + 1)) {
    // Count newlines only between the previous match and this one, so many matches stay linear.
    line += lineCount(content.slice(counted, at));
    counted = at;
    lines.push(line);
  }
  return lines;
}

function lineCount(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}
