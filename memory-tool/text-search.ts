/**
 * Exact-text search that is linear in text + needle whatever they hold.
 *
 * `String.prototype.indexOf` is not: V8's Boyer-Moore keeps its good-suffix
 * table for at most the last 250 characters of a needle, so a longer needle
 * such as a^500 b a^500 in 2 MiB of a's takes seconds. Needles up to that
 * length stay with the native search (measured linear, and 10-30x faster);
 * longer ones use Knuth-Morris-Pratt.
 */

/** V8's `kBMMaxShift`: up to this length a needle's native search is linear. */
const NATIVE_MAX_NEEDLE = 250;

/**
 * Calls `found` with each start offset of `needle` in `text`, in order, until
 * it returns false. Overlapping occurrences are reported unless
 * `overlapping` is false (then the next search starts after a match, as
 * Python's `str.count` counts). `needle` must not be empty.
 *
 * Overlapping matches always go through KMP: restarting a native search one
 * character after each match re-compares the needle every time (text x needle).
 *
 * @example
 * const at: number[] = [];
 * forEachMatch("aaaa", "aa", true, (i) => at.push(i) < 10) // at = [0, 1, 2]
 */
export function forEachMatch(text: string, needle: string, overlapping: boolean, found: (at: number) => boolean): void {
  if (!overlapping && needle.length <= NATIVE_MAX_NEEDLE) {
    // Each native search costs what it passes over plus the needle, and the next starts past the match.
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
      if (!found(at)) return;
    }
    return;
  }
  const m = needle.length;
  const fail = failureTable(needle);
  let k = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    while (k > 0 && needle.charCodeAt(k) !== c) k = fail[k - 1]!;
    if (needle.charCodeAt(k) === c) k++;
    if (k === m) {
      if (!found(i - m + 1)) return;
      k = overlapping ? fail[m - 1]! : 0;
    }
  }
}

/**
 * Start offsets of the first `limit` occurrences (overlapping ones included
 * unless `overlapping` is false). A limit of one or two, the question "is it
 * there, and only once?", stays native for short needles.
 */
export function firstMatches(text: string, needle: string, limit: number, overlapping = true): number[] {
  const out: number[] = [];
  if (limit <= 0) return out;
  if (limit <= 2 && needle.length <= NATIVE_MAX_NEEDLE) {
    const step = overlapping ? 1 : needle.length;
    for (let at = text.indexOf(needle); at !== -1 && out.length < limit; at = text.indexOf(needle, at + step))
      out.push(at);
    return out;
  }
  forEachMatch(text, needle, overlapping, (at) => out.push(at) < limit);
  return out;
}

/** KMP: for each prefix of `needle`, the length of its longest proper border. */
function failureTable(needle: string): Int32Array {
  const fail = new Int32Array(needle.length);
  for (let i = 1, k = 0; i < needle.length; i++) {
    const c = needle.charCodeAt(i);
    while (k > 0 && needle.charCodeAt(k) !== c) k = fail[k - 1]!;
    if (needle.charCodeAt(k) === c) k++;
    fail[i] = k;
  }
  return fail;
}
