import { fail, ok, type Result } from "../../shared/result.ts";

/** One exact-text replacement, as `edit_file` takes it. */
export interface TextEdit {
  oldText: string;
  newText: string;
}

/**
 * Applies edits in order, each to the result of the ones before. Every
 * `oldText` must occur exactly once at that point: an edit that could land in
 * two places is refused rather than guessed, and nothing is applied unless
 * every edit applies.
 *
 * @example
 * applyEdits("a b c", [{ oldText: "b", newText: "B" }]) // ok("a B c")
 */
export function applyEdits(content: string, edits: readonly TextEdit[]): Result<string> {
  let text = content;
  for (const [index, edit] of edits.entries()) {
    const label = `edit ${index + 1}`;
    if (edit.oldText === "") return fail("bad_request", `${label}: oldText is empty`);
    const at = text.indexOf(edit.oldText);
    if (at === -1) return fail("bad_request", `${label}: oldText does not appear verbatim in the file`);
    if (text.indexOf(edit.oldText, at + 1) !== -1) {
      return fail("bad_request", `${label}: oldText appears more than once; include more surrounding text to make it unique`);
    }
    // Slicing, not String.replace: a `$&` in newText must stay literal.
    text = text.slice(0, at) + edit.newText + text.slice(at + edit.oldText.length);
  }
  return ok(text);
}
