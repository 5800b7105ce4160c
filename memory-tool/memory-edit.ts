import type { Result } from "../shared/result.ts";
import { yieldTurn } from "../shared/yield-turn.ts";
import { type MemoryPath, quoteInput, toCapPath } from "./memory-path.ts";
import { memoryRefusal } from "./memory-refusals.ts";
import { capError, done, type MemoryResult, numberedLine, referenceError } from "./memory-result.ts";
import { MAX_TEXT_BYTES, type TextFiles } from "./text-files.ts";
import { lineIndexOfInTurns, lineOffset, lineStart, linesFrom, splitLineCount } from "./text-lines.ts";
import { firstMatchesInTurns, forEachMatch } from "./text-search.ts";

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
async function editFile(
  files: TextFiles,
  rawPath: string,
  edit: (text: string, path: MemoryPath) => EditOutcome | Promise<EditOutcome>,
): Promise<MemoryResult> {
  const path = toCapPath(rawPath);
  if (!path.ok) return capError(path.error, rawPath);
  const p = path.value;
  if (p.rel.segments.length === 0) return referenceError(memoryRefusal("notAFile", { shown: p.shown }));
  for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt++) {
    const file = await files.readText(p.rel.text, MAX_TEXT_BYTES);
    if (!file.ok) return readFailure(file, p);
    // A turn of the runtime before and after the edit, a synchronous pass over up to 2 MiB: reading,
    // editing and writing back in one go held up every other request (see yield-turn.ts).
    await yieldTurn();
    const outcome = await edit(file.value.text, p);
    if (!("result" in outcome)) return outcome;
    await yieldTurn();
    const written = await files.writeText(p.rel.text, outcome.text, { ifMatch: file.value.etag });
    if (written.ok) return outcome.result;
    if (written.error.code !== "precondition_failed") return capError(written.error, p.shown);
  }
  return referenceError(memoryRefusal("keptChanging", { shown: p.shown }));
}

function readFailure(file: Result<unknown> & { ok: false }, p: MemoryPath): MemoryResult {
  if (file.error.code === "not_found")
    return referenceError(memoryRefusal("doesNotExistGiveValid", { shown: p.shown }));
  if (file.error.code === "conflict") return referenceError(memoryRefusal("notAFile", { shown: p.shown }));
  return capError(file.error, p.shown);
}

/** Line numbers listed when old_str occurs more than once; a needle found on every line of a huge file lists no more. */
export const MAX_LINES_LISTED = 100;

/**
 * `str_replace`: `old_str` must occur exactly once (counted without overlaps,
 * as Python's `str.count`); the result shows the edited lines in context.
 * Linear in the file and `old_str` whatever they hold (see text-search.ts).
 */
export function strReplaceCommand(
  files: TextFiles,
  rawPath: string,
  oldStr: string,
  newStr: string,
): Promise<MemoryResult> {
  return editFile(files, rawPath, async (content, p) => {
    if (oldStr === "") return referenceError(memoryRefusal("emptyOldStr", { shown: p.shown }));
    // In turns: a needle over 250 characters is searched by KMP, tens of ms over 2 MiB.
    const found = await firstMatchesInTurns(content, oldStr, 2, false);
    if (found.length === 0) {
      return referenceError(memoryRefusal("oldStrMissing", { oldStr, shown: p.shown }));
    }
    if (found.length > 1) {
      return referenceError(memoryRefusal("oldStrRepeated", { oldStr, lines: matchingLines(content, oldStr) }));
    }
    const at = found[0]!;
    // Slicing, not String.replace: a `$&` in new_str must stay literal.
    const text = content.slice(0, at) + newStr + content.slice(at + oldStr.length);
    // Two lines before the change to three after its first line, found from the change, not by splitting the file.
    const changed = await lineIndexOfInTurns(content, at);
    let from = lineStart(text, at);
    let first = changed;
    for (; first > Math.max(0, changed - 2); first--) from = lineStart(text, from - 1);
    const snippet = linesFrom(text, from, changed + 3 - first).map((line, i) => numberedLine(first + i + 1, line));
    return {
      text,
      result: done(
        `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${snippet.join("\n")}`,
      ),
    };
  });
}

/**
 * `insert`: the reference's `lines.splice(insert_line, 0, insert_text without
 * one trailing newline)` over `content.split("\n")`, joined back with `\n`: so
 * `insert_line` runs from 0 to the split's length (one past the last line of a
 * file ending in a newline, where the text lands after an empty line), and the
 * file keeps or lacks its final newline as it did. Counted and cut by offset, never split.
 */
export function insertCommand(
  files: TextFiles,
  rawPath: string,
  insertLine: unknown,
  insertText: string,
): Promise<MemoryResult> {
  return editFile(files, rawPath, (content, p) => {
    const count = splitLineCount(content);
    if (typeof insertLine !== "number" || !Number.isSafeInteger(insertLine) || insertLine < 0 || insertLine > count) {
      return referenceError(memoryRefusal("badInsertLine", { quoted: quoteInput(insertLine), count }));
    }
    const line = insertText.endsWith("\n") ? insertText.slice(0, -1) : insertText;
    const cut = lineOffset(content, insertLine);
    const text =
      insertLine === count ? `${content}\n${line}` : `${content.slice(0, cut)}${line}\n${content.slice(cut)}`;
    return { text, result: done(`The file ${p.shown} has been edited.`) };
  });
}

/**
 * 1-based lines where an occurrence starts, overlapping ones included, each
 * line once, as the reference reports them; at most {@link MAX_LINES_LISTED}.
 */
export function matchingLines(content: string, needle: string): string {
  const lines: number[] = [];
  let line = 1;
  // The next newline not yet counted: each one is found once, so many matches stay linear.
  let nextNewline = content.indexOf("\n");
  let more = false;
  forEachMatch(content, needle, true, (at) => {
    while (nextNewline !== -1 && nextNewline < at) {
      line++;
      nextNewline = content.indexOf("\n", nextNewline + 1);
    }
    if (lines[lines.length - 1] === line) return true;
    if (lines.length === MAX_LINES_LISTED) {
      more = true;
      return false;
    }
    lines.push(line);
    return true;
  });
  return more ? `${lines.join(", ")}, …` : lines.join(", ");
}
