/**
 * A unified diff in the format of jsdiff's `createTwoFilesPatch`, which the
 * reference MCP filesystem server returns from `edit_file`.
 *
 * Bounded in work: the common head and tail are found character by character
 * and never split into lines; only the middle that differs is diffed line by
 * line, and a middle too large or too different for {@link lineDiff} is shown
 * as one replaced block, built with native string operations.
 */
import { lineIndexOf, splitLineCount } from "../../memory-tool/text-lines.ts";
import { lineDiff, type Op } from "./line-diff.ts";

/** jsdiff's default context, which the reference server uses. */
const CONTEXT = 4;

/** A differing middle with more lines than this, both sides together, is shown as one replaced block. */
export const MAX_DIFF_LINES = 50_000;

const NO_NEWLINE = "\\ No newline at end of file";

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
  const head = `Index: ${path}\n${"=".repeat(67)}\n--- ${path}\toriginal\n+++ ${path}\tmodified\n`;
  if (before === after) return head;
  const { headEnd, tailA, tailB } = commonEnds(before, after);
  // Complete lines, each with its newline: up to CONTEXT of them on either side of the middle.
  const above = lastLines(before, headEnd, CONTEXT);
  const below = firstLines(before, tailA, CONTEXT);
  const firstLine = lineIndexOf(before, headEnd) - above.length;
  const midA = before.slice(headEnd, tailA);
  const midB = after.slice(headEnd, tailB);
  // Counted once: each count is a pass over up to 2 MiB, and the replaced block needs them again.
  const [countA, countB] = [splitLineCount(midA), splitLineCount(midB)];
  const ops = countA + countB <= MAX_DIFF_LINES + 2 ? middleOps(midA, midB) : null;
  if (ops === null)
    return (
      head +
      replacedBlock(
        firstLine,
        above,
        { text: midA, lines: lineCount(midA, countA) },
        { text: midB, lines: lineCount(midB, countB) },
        below,
      )
    );
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

/** Lines of the middle and their edit script, or null when the line diff gives up. */
function middleOps(midA: string, midB: string): { a: string[]; b: string[]; ops: Op[] } | null {
  const a = splitKeepingNewlines(midA);
  const b = splitKeepingNewlines(midB);
  const ops = lineDiff(a, b);
  return ops === null ? null : { a, b, ops };
}

/**
 * Where the texts stop agreeing, on line boundaries: `[0, headEnd)` is the
 * same whole lines in both, and so are `before[tailA..]` and `after[tailB..]`.
 */
function commonEnds(before: string, after: string): { headEnd: number; tailA: number; tailB: number } {
  let p = 0;
  const shorter = Math.min(before.length, after.length);
  while (p < shorter && before.charCodeAt(p) === after.charCodeAt(p)) p++;
  // Back to the start of the line holding the first difference.
  const headEnd = p === 0 ? 0 : before.lastIndexOf("\n", p - 1) + 1;
  let s = 0;
  const room = shorter - headEnd;
  while (s < room && before.charCodeAt(before.length - 1 - s) === after.charCodeAt(after.length - 1 - s)) s++;
  const lineStart = (text: string, at: number) => at === headEnd || text.charCodeAt(at - 1) === 10;
  if (lineStart(before, before.length - s) && lineStart(after, after.length - s)) {
    return { headEnd, tailA: before.length - s, tailB: after.length - s };
  }
  // Inside the common tail both texts hold the same characters, so a newline there is one in both.
  const nl = before.indexOf("\n", before.length - s);
  const t = nl === -1 ? 0 : before.length - nl - 1;
  return { headEnd, tailA: before.length - t, tailB: after.length - t };
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
  midA: { text: string; lines: number },
  midB: { text: string; lines: number },
  below: readonly string[],
): string {
  const kept = (lines: readonly string[]) => lines.map((line) => bodyLine(" ", line)).join("");
  const oldLines = above.length + midA.lines + below.length;
  const newLines = above.length + midB.lines + below.length;
  return (
    hunkHeader(firstLine, oldLines, firstLine, newLines) +
    kept(above) +
    block("-", midA.text) +
    block("+", midB.text) +
    kept(below)
  );
}

/** Every line of `text` prefixed with `op`, without splitting it into an array. */
function block(op: Op, text: string): string {
  if (text === "") return "";
  const eol = text.endsWith("\n");
  const body = op + (eol ? text.slice(0, -1) : text).replaceAll("\n", `\n${op}`);
  return eol ? `${body}\n` : `${body}\n${NO_NEWLINE}\n`;
}

/** Lines as a diff counts them, from `splitCount` = {@link splitLineCount}(text). */
function lineCount(text: string, splitCount: number): number {
  return text === "" ? 0 : splitCount - (text.endsWith("\n") ? 1 : 0);
}
