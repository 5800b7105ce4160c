/**
 * A unified diff in the format of jsdiff's `createTwoFilesPatch`, which the
 * reference MCP filesystem server returns from `edit_file`.
 */

/** jsdiff's default context, which the reference server uses. */
const CONTEXT = 4;
/** Beyond this many differing lines the middle is shown as one replaced block: still a correct patch, found in bounded time. */
const MAX_EDIT_DISTANCE = 500;

type Op = " " | "-" | "+";

interface Line {
  text: string;
  /** False for a last line without a trailing newline. */
  eol: boolean;
}

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
  const a = splitLines(before);
  const b = splitLines(after);
  const ops = diffOps(a.map(key), b.map(key));
  const out = ["Index: " + path, "=".repeat(67), `--- ${path}\toriginal`, `+++ ${path}\tmodified`];

  // Where each op stands in `a` and `b` before it applies.
  const posA: number[] = [];
  const posB: number[] = [];
  let i = 0;
  let j = 0;
  for (const op of ops) {
    posA.push(i);
    posB.push(j);
    if (op !== "+") i++;
    if (op !== "-") j++;
  }

  const changes = ops.flatMap((op, index) => (op === " " ? [] : [index]));
  let g = 0;
  while (g < changes.length) {
    // A hunk spans changes separated by at most 2 × CONTEXT unchanged lines.
    let last = g;
    while (last + 1 < changes.length && changes[last + 1]! - changes[last]! <= 2 * CONTEXT + 1) last++;
    const start = Math.max(0, changes[g]! - CONTEXT);
    const end = Math.min(ops.length - 1, changes[last]! + CONTEXT);
    const body: string[] = [];
    let oldLines = 0;
    let newLines = 0;
    for (let k = start; k <= end; k++) {
      const op = ops[k]!;
      const line = op === "+" ? b[posB[k]!]! : a[posA[k]!]!;
      if (op !== "+") oldLines++;
      if (op !== "-") newLines++;
      body.push(op + line.text);
      if (!line.eol) body.push("\\ No newline at end of file");
    }
    // jsdiff's convention: an empty side starts at the line before.
    const oldStart = posA[start]! + (oldLines === 0 ? 0 : 1);
    const newStart = posB[start]! + (newLines === 0 ? 0 : 1);
    out.push(`@@ -${oldStart},${oldLines} +${newStart},${newLines} @@`, ...body);
    g = last + 1;
  }
  return out.join("\n") + "\n";
}

function splitLines(text: string): Line[] {
  if (text === "") return [];
  const parts = text.split("\n");
  const endsWithNewline = parts[parts.length - 1] === "";
  if (endsWithNewline) parts.pop();
  return parts.map((t, index) => ({ text: t, eol: endsWithNewline || index < parts.length - 1 }));
}

/** Lines compare with their newline, so gaining or losing the final newline is a change. */
function key(line: Line): string {
  return line.eol ? `${line.text}\n` : line.text;
}

function diffOps(a: string[], b: string[]): Op[] {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let endA = a.length;
  let endB = b.length;
  while (endA > head && endB > head && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(head, endA);
  const midB = b.slice(head, endB);
  const middle: Op[] = myers(midA, midB) ?? [...midA.map((): Op => "-"), ...midB.map((): Op => "+")];
  return [...Array<Op>(head).fill(" "), ...middle, ...Array<Op>(a.length - endA).fill(" ")];
}

/**
 * Myers' O(ND) shortest edit script, keeping only the part of each round's
 * frontier that backtracking reads (O(D²) memory). `null` past
 * {@link MAX_EDIT_DISTANCE}.
 */
function myers(a: string[], b: string[]): Op[] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  if (max === 0) return [];
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= Math.min(max, MAX_EDIT_DISTANCE); d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  if (found < 0) return null;

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
