/**
 * A small glob matcher for `/`-separated relative paths, pure and without
 * RegExp (a glob turned into a regular expression can backtrack
 * exponentially): both levels match with the two-pointer method, so a test
 * costs at most the product of the pattern's and the path's lengths.
 *
 * Supported: `*` (any run within a segment, a leading dot included), `?`
 * (one character), `[abc]`, `[a-z]`, `[!a]`/`[^a]`, `**` as a whole segment
 * (zero or more segments), `{a,b}` alternatives (at most
 * {@link MAX_GLOB_ALTERNATIVES}) and `\` escapes. Anything else is literal.
 */

/** Alternatives one glob's braces may expand to; past it, {@link compilePathGlob} answers null. */
export const MAX_GLOB_ALTERNATIVES = 64;

type Char = string | { ranges: [number, number][]; negated: boolean } | null;
type Part = "*" | { char: Char };
type Segment = "**" | Part[];

/** A compiled glob: the path matches when any alternative does. */
export interface PathGlob {
  alternatives: Segment[][];
}

/** The glob, compiled; null when its braces expand past {@link MAX_GLOB_ALTERNATIVES}. */
export function compilePathGlob(pattern: string): PathGlob | null {
  const expanded: string[] = [];
  if (!expand(pattern.replace(/^\/+/, ""), expanded)) return null;
  return { alternatives: expanded.map((p) => p.split("/").map((s) => (s === "**" ? "**" : compileSegment(s)))) };
}

/** Whether `path` (relative, `/`-separated, no leading `/`) matches. */
export function pathGlobMatches(glob: PathGlob, path: string): boolean {
  const segments = path.split("/");
  return glob.alternatives.some((alternative) => matchSegments(alternative, segments));
}

/** Whether some path below `prefix` (a folder, relative) could match: a walk may skip the folder when not. */
export function pathGlobMayMatchBelow(glob: PathGlob, prefix: string): boolean {
  if (prefix === "") return true;
  const segments = prefix.split("/");
  return glob.alternatives.some((alternative) => {
    for (let i = 0; i < segments.length; i++) {
      const p = alternative[i];
      if (p === undefined) return false;
      if (p === "**") return true;
      if (!matchSegment(p, segments[i]!)) return false;
    }
    return alternative.length > segments.length;
  });
}

function matchSegments(pattern: Segment[], path: string[]): boolean {
  let p = 0;
  let s = 0;
  let starP = -1;
  let starS = 0;
  while (s < path.length) {
    const seg = pattern[p];
    if (seg === "**") {
      starP = p++;
      starS = s;
    } else if (seg !== undefined && matchSegment(seg, path[s]!)) {
      p++;
      s++;
    } else if (starP >= 0) {
      p = starP + 1;
      s = ++starS;
    } else return false;
  }
  while (pattern[p] === "**") p++;
  return p === pattern.length;
}

function matchSegment(parts: Part[], text: string): boolean {
  const chars = Array.from(text);
  let p = 0;
  let c = 0;
  let starP = -1;
  let starC = 0;
  while (c < chars.length) {
    const part = parts[p];
    if (part === "*") {
      starP = p++;
      starC = c;
    } else if (part !== undefined && matchChar(part.char, chars[c]!)) {
      p++;
      c++;
    } else if (starP >= 0) {
      p = starP + 1;
      c = ++starC;
    } else return false;
  }
  while (parts[p] === "*") p++;
  return p === parts.length;
}

function matchChar(test: Char, c: string): boolean {
  if (test === null) return true;
  if (typeof test === "string") return test === c;
  const code = c.codePointAt(0)!;
  const inside = test.ranges.some(([lo, hi]) => code >= lo && code <= hi);
  return inside !== test.negated;
}

function compileSegment(text: string): Part[] {
  const parts: Part[] = [];
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === "*") {
      if (parts.at(-1) !== "*") parts.push("*");
    } else if (c === "?") parts.push({ char: null });
    else if (c === "\\" && i + 1 < chars.length) parts.push({ char: chars[++i]! });
    else if (c === "[") {
      const klass = compileClass(chars, i);
      if (klass) {
        parts.push({ char: klass.test });
        i = klass.end;
      } else parts.push({ char: "[" });
    } else parts.push({ char: c });
  }
  return parts;
}

/** The class opening at `chars[start]`, or null when it never closes (then `[` is literal). */
function compileClass(chars: string[], start: number): { test: Char; end: number } | null {
  let i = start + 1;
  const negated = chars[i] === "!" || chars[i] === "^";
  if (negated) i++;
  const ranges: [number, number][] = [];
  for (let first = true; i < chars.length; first = false) {
    if (chars[i] === "]" && !first) return { test: { ranges, negated }, end: i };
    let lo = chars[i]!;
    if (lo === "\\" && i + 1 < chars.length) lo = chars[++i]!;
    i++;
    let hi = lo;
    if (chars[i] === "-" && i + 1 < chars.length && chars[i + 1] !== "]") {
      hi = chars[i + 1]!;
      i += 2;
    }
    ranges.push([lo.codePointAt(0)!, hi.codePointAt(0)!]);
  }
  return null;
}

/** `{a,b}` expanded into `out`, leftmost group first; false past {@link MAX_GLOB_ALTERNATIVES}. */
function expand(pattern: string, out: string[]): boolean {
  const group = firstGroup(pattern);
  if (!group) {
    out.push(pattern);
    return out.length <= MAX_GLOB_ALTERNATIVES;
  }
  const head = pattern.slice(0, group.open);
  const tail = pattern.slice(group.close + 1);
  for (const alternative of group.alternatives) if (!expand(head + alternative + tail, out)) return false;
  return true;
}

/** The leftmost innermost-closed `{...}` with a top-level comma; an unclosed `{` or one without a comma is literal. */
function firstGroup(p: string): { open: number; close: number; alternatives: string[] } | null {
  const open: { at: number; cuts: number[] }[] = [];
  let best: { at: number; close: number; cuts: number[] } | null = null;
  for (let i = 0; i < p.length; i++) {
    if (p[i] === "\\") i++;
    else if (p[i] === "{") open.push({ at: i, cuts: [] });
    else if (p[i] === "," && open.length > 0) open.at(-1)!.cuts.push(i);
    else if (p[i] === "}" && open.length > 0) {
      const group = open.pop()!;
      if (group.cuts.length > 0 && (best === null || group.at < best.at)) best = { ...group, close: i };
    }
  }
  if (!best) return null;
  const cuts = [best.at, ...best.cuts, best.close];
  return {
    open: best.at,
    close: best.close,
    alternatives: cuts.slice(1).map((cut, k) => p.slice(cuts[k]! + 1, cut)),
  };
}
