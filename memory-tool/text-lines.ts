/**
 * Lines of a text as `text.split("\n")` numbers them (a final newline is
 * followed by one empty line), without building that array: a 2 MiB file of
 * newlines is two million strings, a quarter of a second before any work.
 * Each helper costs what it scans. Newlines are counted in a plain loop: one
 * native `indexOf` call per newline costs ten times more on a text of newlines.
 */
import { yieldTurn } from "../shared/yield-turn.ts";

/** Characters counted between two turns in {@link lineIndexOfInTurns}: ~1 ms here. */
export const LINE_STEP_CHARS = 1 << 17;

/** `text.split("\n").length`. */
export function splitLineCount(text: string): number {
  return 1 + lineIndexOf(text, text.length);
}

/** Offset where line `index` (0-based, as split numbers them) starts; the text's length past the last one. */
export function lineOffset(text: string, index: number): number {
  let seen = 0;
  for (let i = 0; i < text.length && seen < index; i++) {
    if (text.charCodeAt(i) === 10 && ++seen === index) return i + 1;
  }
  return index === 0 ? 0 : text.length;
}

/** Up to `count` lines from `offset` (a line start), without their newlines; the last may be the empty one after a final newline. */
export function linesFrom(text: string, offset: number, count: number): string[] {
  const out: string[] = [];
  let at = offset;
  while (out.length < count && at <= text.length) {
    const nl = text.indexOf("\n", at);
    out.push(nl === -1 ? text.slice(at) : text.slice(at, nl));
    if (nl === -1) break;
    at = nl + 1;
  }
  return out;
}

/** Offset where the line holding `at` starts. */
export function lineStart(text: string, at: number): number {
  return at === 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
}

/** Number of `\n` before `at`: the 0-based line (as split numbers them) that `at` is on. */
export function lineIndexOf(text: string, at: number): number {
  return newlinesIn(text, 0, at);
}

/** {@link lineIndexOf} with a turn of the runtime after every `step` characters: 2 MiB is ~10 ms of counting. */
export async function lineIndexOfInTurns(text: string, at: number, step = LINE_STEP_CHARS): Promise<number> {
  let n = 0;
  for (let from = 0; from < at; from += step) {
    if (from > 0) await yieldTurn();
    n += newlinesIn(text, from, Math.min(at, from + step));
  }
  return n;
}

/** Number of `\n` in `text[from..to)`. */
export function newlinesIn(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (text.charCodeAt(i) === 10) n++;
  return n;
}
