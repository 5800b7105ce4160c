import { firstMatches } from "../../memory-tool/text-search.ts";
import { fail, ok, type Result } from "../../shared/result.ts";

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
  if (edits.length > MAX_EDITS)
    return fail("bad_request", `at most ${MAX_EDITS} edits per call; split them over several calls`);
  let text = content;
  let searched = 0;
  for (const [index, edit] of edits.entries()) {
    const label = `edit ${index + 1}`;
    if (edit.oldText === "") return fail("bad_request", `${label}: oldText is empty`);
    searched += text.length;
    if (searched > MAX_EDIT_SEARCH_CHARS) {
      return fail(
        "bad_request",
        `${label}: these edits search more than ${MAX_EDIT_SEARCH_CHARS} characters in all (edits × file length); split them over several calls`,
      );
    }
    // Two matches, overlapping ones included, answer "once?"; a second one may start inside the first.
    const [at, again] = firstMatches(text, edit.oldText, 2);
    if (at === undefined) return fail("bad_request", `${label}: oldText does not appear verbatim in the file`);
    if (again !== undefined) {
      return fail(
        "bad_request",
        `${label}: oldText appears more than once; include more surrounding text to make it unique`,
      );
    }
    // Slicing, not String.replace: a `$&` in newText must stay literal.
    text = text.slice(0, at) + edit.newText + text.slice(at + edit.oldText.length);
  }
  return ok(text);
}
