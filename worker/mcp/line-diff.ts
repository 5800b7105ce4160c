import { runAtOnce, runInTurns, type Steps } from "../../shared/in-turns.ts";

/** One line of a diff: kept, removed from the old text, or added by the new one. */
export type Op = " " | "-" | "+";

/** Beyond this many differing lines the caller shows the middle as one replaced block: still a correct patch. */
export const MAX_EDIT_DISTANCE = 500;

/**
 * Steps (diagonals visited plus lines compared) the search may take. Myers is
 * O((N+M)·D): even with D capped, long runs of equal lines on many diagonals
 * can cost N·D comparisons, so the work itself is capped too.
 */
export const MAX_DIFF_WORK = 4_000_000;

/** Steps between two turns (in-turns version): ~2–4 ms of the search here, so the cap is ~20 steps. */
export const DIFF_STEP_WORK = 500_000;

/**
 * Myers' O(ND) shortest edit script between two lists of lines, or `null`
 * when it needs more than {@link MAX_EDIT_DISTANCE} edits or
 * {@link MAX_DIFF_WORK} steps. Lines are interned to numbers first, so a
 * comparison costs one step however long the lines are.
 *
 * @example
 * lineDiff(["a\n", "b\n"], ["a\n", "c\n"]) // [" ", "-", "+"]
 */
export function lineDiff(a: readonly string[], b: readonly string[]): Op[] | null {
  return runAtOnce(lineDiffSteps(a, b, DIFF_STEP_WORK));
}

/** {@link lineDiff} with a turn of the runtime after every `step` steps of work: the same answer. */
export function lineDiffInTurns(
  a: readonly string[],
  b: readonly string[],
  step = DIFF_STEP_WORK,
): Promise<Op[] | null> {
  return runInTurns(lineDiffSteps(a, b, step));
}

/** The steps of {@link lineDiff}, to run inside a longer stepped loop. */
export function lineDiffSteps(a: readonly string[], b: readonly string[], step: number): Steps<Op[] | null> {
  const ids = new Map<string, number>();
  const intern = (line: string) => {
    const known = ids.get(line);
    if (known !== undefined) return known;
    ids.set(line, ids.size);
    return ids.size - 1;
  };
  return myers(Int32Array.from(a, intern), Int32Array.from(b, intern), step);
}

/** Keeps only the part of each round's frontier that backtracking reads (O(D²) memory). */
function* myers(a: Int32Array, b: Int32Array, step: number): Steps<Op[] | null> {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return [];
  const reach = Math.min(max, MAX_EDIT_DISTANCE);
  const offset = reach + 1;
  const v = new Int32Array(2 * reach + 3);
  const trace: Int32Array[] = [];
  let work = 0;
  let turnAt = step;
  let found = -1;
  for (let d = 0; d <= reach && found < 0; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      const from = x;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      work += 1 + x - from;
      if (work > MAX_DIFF_WORK) return null;
      if (work >= turnAt) {
        turnAt = work + step;
        yield;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  return found < 0 ? null : backtrack(trace, found, n, m);
}

function backtrack(trace: readonly Int32Array[], found: number, n: number, m: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = found; d >= 0; d--) {
    const w = trace[d]!;
    const at = (k: number) => w[k + d + 1]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : at(prevK);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push(" ");
      x--;
      y--;
    }
    if (d > 0) ops.push(x === prevX ? "+" : "-");
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}
