import { firstMatchSteps, SEARCH_STEP_CHARS } from "../../memory-tool/text-search.ts";
import { runAtOnce, runInTurns, type Steps } from "../../shared/in-turns.ts";
import { failed, ok, type Result } from "../../shared/result.ts";
import { mcpRefusal } from "./mcp-refusals.ts";

/** One exact-text replacement, as `edit_file` takes it. */
export interface TextEdit {
  oldText: string;
  newText: string;
}

/** Edits in one `edit_file` call; an agent makes a handful, a long refactor a few dozen. */
export const MAX_EDITS = 100;

/**
 * Characters the edits of one call may search in all (each edit searches the
 * whole text as the edits before it left it): 8 edits of a 2 MiB file, or
 * 100 of a 160 KB one. Without it, 100 edits of a 2 MiB file are seconds of CPU.
 */
export const MAX_EDIT_SEARCH_CHARS = 16 * 1024 * 1024;

/**
 * Applies edits in order, each to the result of the ones before. Every
 * `oldText` must occur exactly once at that point: an edit that could land in
 * two places is refused rather than guessed, and nothing is applied unless
 * every edit applies. Linear per edit, whatever the texts hold.
 *
 * @example
 * applyEdits("a b c", [{ oldText: "b", newText: "B" }]) // ok("a B c")
 */
export function applyEdits(content: string, edits: readonly TextEdit[]): Result<string> {
  return runAtOnce(editSteps(content, edits, SEARCH_STEP_CHARS));
}

/**
 * {@link applyEdits} with a turn of the runtime after every `step` characters
 * searched: a long needle's search over 1 MiB is tens of ms of KMP, which
 * held up every other request on the thread. The same code, so the same result.
 */
export function applyEditsInTurns(
  content: string,
  edits: readonly TextEdit[],
  step = SEARCH_STEP_CHARS,
): Promise<Result<string>> {
  return runInTurns(editSteps(content, edits, step));
}

function* editSteps(content: string, edits: readonly TextEdit[], step: number): Steps<Result<string>> {
  if (edits.length > MAX_EDITS) return failed(mcpRefusal("tooManyEdits", { max: MAX_EDITS }));
  let text = content;
  let searched = 0;
  let sinceTurn = 0;
  for (const [index, edit] of edits.entries()) {
    const n = index + 1; // edits are numbered from 1 in refusals
    if (edit.oldText === "") return failed(mcpRefusal("emptyOldText", { edit: n }));
    searched += text.length;
    if (searched > MAX_EDIT_SEARCH_CHARS) {
      return failed(mcpRefusal("editsSearchTooMuch", { edit: n, max: MAX_EDIT_SEARCH_CHARS }));
    }
    // Short needles search natively, in calls that cannot be cut: the turn comes between edits.
    if (sinceTurn >= step) {
      sinceTurn = 0;
      yield;
    }
    sinceTurn += text.length;
    // Two matches, overlapping ones included, answer "once?"; a second one may start inside the first.
    const [at, again] = yield* firstMatchSteps(text, edit.oldText, 2, true, step);
    if (at === undefined) return failed(mcpRefusal("oldTextMissing", { edit: n }));
    if (again !== undefined) {
      return failed(mcpRefusal("oldTextRepeated", { edit: n }));
    }
    // Slicing, not String.replace: a `$&` in newText must stay literal.
    text = text.slice(0, at) + edit.newText + text.slice(at + edit.oldText.length);
  }
  return ok(text);
}
