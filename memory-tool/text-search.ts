/**
 * Exact-text search that is linear in text + needle whatever they hold.
 *
 * `String.prototype.indexOf` is not: V8's Boyer-Moore keeps its good-suffix
 * table for at most the last 250 characters of a needle, so a longer needle
 * such as a^500 b a^500 in 2 MiB of a's takes seconds. Needles up to that
 * length stay with the native search (measured linear, and 10-30x faster);
 * longer ones use Knuth-Morris-Pratt.
 */

import { runAtOnce, runInTurns, type Steps } from "../shared/in-turns.ts";

/** V8's `kBMMaxShift`: up to this length a needle's native search is linear. */
const NATIVE_MAX_NEEDLE = 250;

/**
 * Characters a search passes over between two turns (in-turns versions):
 * KMP over this many is a step of ~2–4 ms here, so a 2 MiB search leaves
 * other requests room instead of holding the thread for tens of ms.
 */
export const SEARCH_STEP_CHARS = 1 << 17;

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
  runAtOnce(matchSteps(text, needle, overlapping, found, SEARCH_STEP_CHARS));
}

/** {@link forEachMatch} with a turn of the runtime after every `step` characters searched. */
export function forEachMatchInTurns(
  text: string,
  needle: string,
  overlapping: boolean,
  found: (at: number) => boolean,
  step = SEARCH_STEP_CHARS,
): Promise<void> {
  return runInTurns(matchSteps(text, needle, overlapping, found, step));
}

function* matchSteps(
  text: string,
  needle: string,
  overlapping: boolean,
  found: (at: number) => boolean,
  step: number,
): Steps<void> {
  if (!overlapping && needle.length <= NATIVE_MAX_NEEDLE) {
    // Each native search costs what it passes over plus the needle, and the next starts past the match.
    let passed = 0;
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + needle.length)) {
      if (!found(at)) return;
      // One native call cannot be cut; the turn comes between calls, once they passed over a step.
      if (at + needle.length - passed >= step) {
        passed = at + needle.length;
        yield;
      }
    }
    return;
  }
  const fail = yield* failureTable(needle, step);
  let k = 0;
  for (let start = 0; start < text.length; start += step) {
    k = kmpScan(text, needle, fail, k, start, Math.min(text.length, start + step), overlapping, found);
    if (k < 0) return;
    if (start + step < text.length) yield;
  }
}

/**
 * KMP over `text[start..end)` from state `k`: the next state, or -1 once
 * `found` said stop. A plain function, not generator code: the loop stays as
 * fast as it was before it was cut in steps.
 */
function kmpScan(
  text: string,
  needle: string,
  fail: Int32Array,
  k: number,
  start: number,
  end: number,
  overlapping: boolean,
  found: (at: number) => boolean,
): number {
  const m = needle.length;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    while (k > 0 && needle.charCodeAt(k) !== c) k = fail[k - 1]!;
    if (needle.charCodeAt(k) === c) k++;
    if (k === m) {
      if (!found(i - m + 1)) return -1;
      k = overlapping ? fail[m - 1]! : 0;
    }
  }
  return k;
}

/**
 * Start offsets of the first `limit` occurrences (overlapping ones included
 * unless `overlapping` is false). A limit of one or two, the question "is it
 * there, and only once?", stays native for short needles.
 */
export function firstMatches(text: string, needle: string, limit: number, overlapping = true): number[] {
  return runAtOnce(firstMatchSteps(text, needle, limit, overlapping, SEARCH_STEP_CHARS));
}

/** {@link firstMatches} with a turn of the runtime after every `step` characters searched. */
export function firstMatchesInTurns(
  text: string,
  needle: string,
  limit: number,
  overlapping = true,
  step = SEARCH_STEP_CHARS,
): Promise<number[]> {
  return runInTurns(firstMatchSteps(text, needle, limit, overlapping, step));
}

/** The steps of {@link firstMatches}, to run inside a longer stepped loop. */
export function* firstMatchSteps(
  text: string,
  needle: string,
  limit: number,
  overlapping: boolean,
  step: number,
): Steps<number[]> {
  const out: number[] = [];
  if (limit <= 0) return out;
  if (limit <= 2 && needle.length <= NATIVE_MAX_NEEDLE) {
    // At most two native searches, each linear for such a needle: ~1 ms over 2 MiB, not worth cutting.
    const skip = overlapping ? 1 : needle.length;
    for (let at = text.indexOf(needle); at !== -1 && out.length < limit; at = text.indexOf(needle, at + skip))
      out.push(at);
    return out;
  }
  yield* matchSteps(text, needle, overlapping, (at) => out.push(at) < limit, step);
  return out;
}

/** KMP: for each prefix of `needle`, the length of its longest proper border. */
function* failureTable(needle: string, step: number): Steps<Int32Array> {
  const fail = new Int32Array(needle.length);
  let k = 0;
  for (let start = 1; start < needle.length; start += step) {
    k = borders(needle, fail, k, start, Math.min(needle.length, start + step));
    if (start + step < needle.length) yield;
  }
  return fail;
}

/** Fills `fail[start..end)` from state `k`; the state after. */
function borders(needle: string, fail: Int32Array, k: number, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    const c = needle.charCodeAt(i);
    while (k > 0 && needle.charCodeAt(k) !== c) k = fail[k - 1]!;
    if (needle.charCodeAt(k) === c) k++;
    fail[i] = k;
  }
  return k;
}
