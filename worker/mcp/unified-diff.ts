/**
 * A unified diff in the format of jsdiff's `createTwoFilesPatch`, which the
 * reference MCP filesystem server returns from `edit_file`.
 *
 * Bounded in work: the common head and tail are found character by character
 * and never split into lines; only the middle that differs is diffed line by
 * line, and a middle too large or too different for {@link lineDiff} is shown
 * as one replaced block, built with native string operations.
 */
import { newlinesIn } from "../../memory-tool/text-lines.ts";
import { runAtOnce, runInTurns, type Steps } from "../../shared/in-turns.ts";
import { DIFF_STEP_WORK, lineDiffSteps, type Op } from "./line-diff.ts";

/** jsdiff's default context, which the reference server uses. */
const CONTEXT = 4;

/** A differing middle with more lines than this, both sides together, is shown as one replaced block. */
export const MAX_DIFF_LINES = 50_000;

const NO_NEWLINE = "\\ No newline at end of file";

/**
 * After the common head, texts up to this long are diffed whole, tail
 * included, so the diff is jsdiff's exactly: with the common tail taken off,
 * `-a +b` followed by a kept `b` came out where jsdiff keeps the first `b`
 * and adds the second (a seed of the MCP parity test found it). Longer ones
 * keep the shortcut: still a correct patch, and linear work.
 */
const EXACT_CHARS = 64 * 1024;
/** And up to this many lines, both sides together: 64 KiB of short lines would otherwise pass MAX_DIFF_LINES. */
const EXACT_LINES = 4_000;

/**
 * Work between two turns of the in-turns version: characters a pass over
 * the texts reads (~1–3 ms here), and steps of the line diff.
 */
export interface DiffStepSizes {
  chars: number;
  work: number;
}

export const DIFF_STEPS: DiffStepSizes = { chars: 1 << 17, work: DIFF_STEP_WORK };

/**
 * @example
 * unifiedDiff("notes.md", "a\nb\n", "a\nc\n")
 * // Index: notes.md
 * // ===================================================================
 * // --- notes.md\toriginal
 * // +++ notes.md\tmodified
 * // @@ -1,2 +1,2 @@
 * //  a
 * // -b
 * // +c
 */
export function unifiedDiff(path: string, before: string, after: string): string {
  return runAtOnce(diffSteps(path, before, after, DIFF_STEPS));
}

/**
 * {@link unifiedDiff} with a turn of the runtime after each step of work: on
 * a 1 MiB file its passes are tens of ms, and back to back they held up every
 * other request on the thread. The same code, so the same diff.
 */
export function unifiedDiffInTurns(
  path: string,
  before: string,
  after: string,
  steps: DiffStepSizes = DIFF_STEPS,
): Promise<string> {
  return runInTurns(diffSteps(path, before, after, steps));
}

/** The steps of {@link unifiedDiff}, with the step sizes given (tests cut them small). */
export function* diffSteps(path: string, before: string, after: string, steps: DiffStepSizes): Steps<string> {
  const head = `Index: ${path}\n${"=".repeat(67)}\n--- ${path}\toriginal\n+++ ${path}\tmodified\n`;
  if (before === after) return head;
  const ends = yield* commonEnds(before, after, steps.chars);
  const { headEnd } = ends;
  // Within EXACT_CHARS and EXACT_LINES after the common head the tail is diffed too, as jsdiff diffs
  // everything: Myers places an edit next to equal lines differently once a common tail is taken off
  // first. If the whole-text diff would give up, the tail comes off after all: a short patch beats a
  // replaced block.
  const withTail = before.length - headEnd <= EXACT_CHARS && after.length - headEnd <= EXACT_CHARS;
  let middle = withTail
    ? yield* middleOf(before, after, headEnd, before.length, after.length, steps, EXACT_LINES)
    : null;
  if (middle?.ops == null)
    middle = yield* middleOf(before, after, headEnd, ends.tailA, ends.tailB, steps, MAX_DIFF_LINES);
  const { tailA, midA, midB, countA, countB, ops } = middle;
  // Complete lines, each with its newline: up to CONTEXT of them on either side of the middle.
  const above = lastLines(before, headEnd, CONTEXT);
  const below = firstLines(before, tailA, CONTEXT);
  const firstLine = (yield* newlines(before, 0, headEnd, steps.chars)) - above.length;
  if (ops === null) {
    const removed = yield* block("-", midA, steps.chars);
    const added = yield* block("+", midB, steps.chars);
    return (
      head +
      replacedBlock(
        firstLine,
        above,
        { block: removed, lines: lineCount(midA, countA) },
        { block: added, lines: lineCount(midB, countB) },
        below,
      )
    );
  }
  return (
    head +
    hunks(
      firstLine,
      [...above, ...ops.a, ...below],
      [...above, ...ops.b, ...below],
      [...above.map((): Op => " "), ...ops.ops, ...below.map((): Op => " ")],
    )
  );
}

/**
 * The differing middle `[headEnd, tailA)` of `before` and `[headEnd, tailB)`
 * of `after`, its line counts (as split counts them: each count is a pass
 * over up to 2 MiB, and a replaced block needs them again), and its edit
 * script: null past `maxLines` lines in all or when the line diff gives up.
 */
function* middleOf(
  before: string,
  after: string,
  headEnd: number,
  tailA: number,
  tailB: number,
  steps: DiffStepSizes,
  maxLines: number,
): Steps<{ tailA: number; midA: string; midB: string; countA: number; countB: number; ops: MiddleOps | null }> {
  const midA = before.slice(headEnd, tailA);
  const midB = after.slice(headEnd, tailB);
  const countA = 1 + (yield* newlines(midA, 0, midA.length, steps.chars));
  const countB = 1 + (yield* newlines(midB, 0, midB.length, steps.chars));
  const ops = countA + countB <= maxLines + 2 ? yield* middleOps(midA, midB, steps.work) : null;
  return { tailA, midA, midB, countA, countB, ops };
}

type MiddleOps = { a: string[]; b: string[]; ops: Op[] };

/** Lines of the middle and their edit script, or null when the line diff gives up. */
function* middleOps(midA: string, midB: string, work: number): Steps<MiddleOps | null> {
  const a = splitKeepingNewlines(midA);
  const b = splitKeepingNewlines(midB);
  const ops = yield* lineDiffSteps(a, b, work);
  return ops === null ? null : { a, b, ops };
}

/**
 * Where the texts stop agreeing, on line boundaries: `[0, headEnd)` is the
 * same whole lines in both, and so are `before[tailA..]` and `after[tailB..]`.
 */
function* commonEnds(
  before: string,
  after: string,
  chars: number,
): Steps<{ headEnd: number; tailA: number; tailB: number }> {
  const shorter = Math.min(before.length, after.length);
  let p = 0;
  for (let stop = Math.min(shorter, chars); ; stop = Math.min(shorter, p + chars)) {
    p = sameAhead(before, after, p, stop);
    if (p < stop || stop === shorter) break;
    yield;
  }
  // Back to the start of the line holding the first difference.
  const headEnd = p === 0 ? 0 : before.lastIndexOf("\n", p - 1) + 1;
  const room = shorter - headEnd;
  let s = 0;
  for (let stop = Math.min(room, chars); ; stop = Math.min(room, s + chars)) {
    s = sameBehind(before, after, s, stop);
    if (s < stop || stop === room) break;
    yield;
  }
  const lineStart = (text: string, at: number) => at === headEnd || text.charCodeAt(at - 1) === 10;
  if (lineStart(before, before.length - s) && lineStart(after, after.length - s)) {
    return { headEnd, tailA: before.length - s, tailB: after.length - s };
  }
  // Inside the common tail both texts hold the same characters, so a newline there is one in both.
  const nl = before.indexOf("\n", before.length - s);
  const t = nl === -1 ? 0 : before.length - nl - 1;
  return { headEnd, tailA: before.length - t, tailB: after.length - t };
}

/** From `p`, up to `stop`: the first offset where the texts differ, or `stop`. */
function sameAhead(a: string, b: string, p: number, stop: number): number {
  while (p < stop && a.charCodeAt(p) === b.charCodeAt(p)) p++;
  return p;
}

/** As {@link sameAhead}, counting `s` characters back from both ends. */
function sameBehind(a: string, b: string, s: number, stop: number): number {
  while (s < stop && a.charCodeAt(a.length - 1 - s) === b.charCodeAt(b.length - 1 - s)) s++;
  return s;
}

/** Newlines in `text[from..to)`, a step of `chars` at a time. */
function* newlines(text: string, from: number, to: number, chars: number): Steps<number> {
  let n = 0;
  for (let at = from; at < to; at += chars) {
    if (at > from) yield;
    n += newlinesIn(text, at, Math.min(to, at + chars));
  }
  return n;
}

/** Up to `count` whole lines ending at `end` (a line start), each with its newline. */
function lastLines(text: string, end: number, count: number): string[] {
  const out: string[] = [];
  let stop = end;
  while (out.length < count && stop > 0) {
    const start = stop < 2 ? 0 : text.lastIndexOf("\n", stop - 2) + 1;
    out.unshift(text.slice(start, stop));
    stop = start;
  }
  return out;
}

/** Up to `count` lines from `start` (a line start); the text's last line may lack its newline. */
function firstLines(text: string, start: number, count: number): string[] {
  const out: string[] = [];
  let at = start;
  while (out.length < count && at < text.length) {
    const nl = text.indexOf("\n", at);
    const end = nl === -1 ? text.length : nl + 1;
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}

function splitKeepingNewlines(text: string): string[] {
  return firstLines(text, 0, Number.POSITIVE_INFINITY);
}

/** One diff line per line; a line without its newline (the last) gets jsdiff's marker. */
function bodyLine(op: Op, line: string): string {
  return line.endsWith("\n") ? `${op}${line}` : `${op}${line}\n${NO_NEWLINE}\n`;
}

/** Changes at most 2 × CONTEXT kept lines apart share a hunk, with CONTEXT kept lines around. */
function hunks(firstLine: number, a: readonly string[], b: readonly string[], ops: readonly Op[]): string {
  const changes: number[] = [];
  for (const [index, op] of ops.entries()) if (op !== " ") changes.push(index);
  // Where each op stands in `a` and `b` before it applies.
  const posA = new Int32Array(ops.length);
  const posB = new Int32Array(ops.length);
  for (let k = 0, i = 0, j = 0; k < ops.length; k++) {
    posA[k] = i;
    posB[k] = j;
    if (ops[k] !== "+") i++;
    if (ops[k] !== "-") j++;
  }
  const out: string[] = [];
  for (let g = 0; g < changes.length; ) {
    let last = g;
    while (last + 1 < changes.length && changes[last + 1]! - changes[last]! <= 2 * CONTEXT + 1) last++;
    const start = Math.max(0, changes[g]! - CONTEXT);
    const end = Math.min(ops.length - 1, changes[last]! + CONTEXT);
    const body: string[] = [];
    let oldLines = 0;
    let newLines = 0;
    for (let k = start; k <= end; k++) {
      const op = ops[k]!;
      if (op !== "+") oldLines++;
      if (op !== "-") newLines++;
      body.push(bodyLine(op, op === "+" ? b[posB[k]!]! : a[posA[k]!]!));
    }
    // Joined, not spread into push: a hunk of 100,000 lines as arguments overflows the stack.
    out.push(hunkHeader(firstLine + posA[start]!, oldLines, firstLine + posB[start]!, newLines), body.join(""));
    g = last + 1;
  }
  return out.join("");
}

/** jsdiff's convention: an empty side starts at the line before. */
function hunkHeader(oldAt: number, oldLines: number, newAt: number, newLines: number): string {
  return `@@ -${oldAt + (oldLines === 0 ? 0 : 1)},${oldLines} +${newAt + (newLines === 0 ? 0 : 1)},${newLines} @@\n`;
}

/** The whole middle as removed then added, in one hunk: a correct patch for any size, in native string work. */
function replacedBlock(
  firstLine: number,
  above: readonly string[],
  midA: { block: string; lines: number },
  midB: { block: string; lines: number },
  below: readonly string[],
): string {
  const kept = (lines: readonly string[]) => lines.map((line) => bodyLine(" ", line)).join("");
  const oldLines = above.length + midA.lines + below.length;
  const newLines = above.length + midB.lines + below.length;
  return hunkHeader(firstLine, oldLines, firstLine, newLines) + kept(above) + midA.block + midB.block + kept(below);
}

/**
 * Every line of `text` prefixed with `op`, a slice of `chars` at a time (the
 * newline is one character, so slices cut anywhere give the same text). Each
 * slice is split and joined, not `replaceAll`ed: V8 builds replaceAll's
 * result as a rope of a piece per newline, and flattening 100,000 of them
 * later cost ~10 ms in one go; join builds a flat string.
 */
function* block(op: Op, text: string, chars: number): Steps<string> {
  if (text === "") return "";
  const eol = text.endsWith("\n");
  const core = eol ? text.slice(0, -1) : text;
  const parts: string[] = [op];
  for (let at = 0; at < core.length; at += chars) {
    if (at > 0) yield;
    parts.push(
      core
        .slice(at, at + chars)
        .split("\n")
        .join(`\n${op}`),
    );
  }
  const body = parts.join("");
  return eol ? `${body}\n` : `${body}\n${NO_NEWLINE}\n`;
}

/** Lines as a diff counts them, from `splitCount` = `text.split("\n").length`. */
function lineCount(text: string, splitCount: number): number {
  return text === "" ? 0 : splitCount - (text.endsWith("\n") ? 1 : 0);
}
