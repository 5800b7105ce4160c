import { refuse } from "./refusals.ts";
import { ok, type Result } from "./result.ts";

/**
 * Globs as `@modelcontextprotocol/server-filesystem` reads them (minimatch,
 * `dot: true`), compiled into data for a matcher with a step budget
 * (glob-match.ts), never into a RegExp: a user's glob turned into a regular
 * expression can backtrack exponentially. Supported: `*`, `?`, `[...]`
 * classes (`!`/`^` negation, ranges), `**` segments, `{a,b}` alternatives,
 * `\` escapes, a leading `!` (negation) and `#` (a comment, matching
 * nothing). Not supported, matched literally: extglobs (`+(a|b)`), numeric
 * ranges (`{1..3}`) and POSIX classes (`[[:alpha:]]`).
 */

/** Longest glob accepted; agents' globs are a few dozen characters. */
export const MAX_GLOB_CHARS = 1024;
/** Alternatives one glob's braces may expand to. */
export const MAX_GLOB_ALTERNATIVES = 64;

/** One character's test: a literal, any character (`?`), or a class. */
export type CharTest = string | { ranges: [number, number][]; negated: boolean } | null;
/** A segment's parts: `"*"` is a star, anything else one character's test. */
export type SegmentPart = { star: true } | { char: CharTest };
export type Segment = "**" | "any" | SegmentPart[];

export interface Glob {
  negated: boolean;
  /** `#...`: matches nothing. */
  comment: boolean;
  /** Each a list of `/`-separated segments; the path matches if any alternative does. */
  alternatives: Segment[][];
  /** Characters of the alternatives, all told. */
  size: number;
}

export function compileGlob(pattern: string): Result<Glob> {
  if (pattern.length > MAX_GLOB_CHARS) return refuse("globTooLong", { max: MAX_GLOB_CHARS });
  if (pattern.startsWith("#")) return ok({ negated: false, comment: true, alternatives: [], size: 0 });
  let bangs = 0;
  while (pattern[bangs] === "!") bangs++;
  const expanded: string[] = [];
  if (!expandBraces(pattern.slice(bangs), expanded)) {
    return refuse("globTooManyAlternatives", { max: MAX_GLOB_ALTERNATIVES });
  }
  const size = expanded.reduce((sum, alternative) => sum + alternative.length, 0);
  return ok({ negated: bangs % 2 === 1, comment: false, alternatives: expanded.map(compileAlternative), size });
}

function compileAlternative(pattern: string): Segment[] {
  const segments: Segment[] = pattern.split("/").map((s) => (s === "**" ? "**" : compileSegment(s)));
  // minimatch: a trailing `**` matches one segment or more, so `a/**` does not match `a` itself.
  if (segments.at(-1) === "**") {
    while (segments.at(-1) === "**") segments.pop();
    segments.push("any", "**");
  }
  return segments;
}

function compileSegment(text: string): SegmentPart[] {
  const parts: SegmentPart[] = [];
  const chars = Array.from(text);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === "*") {
      if (!("star" in (parts.at(-1) ?? {}))) parts.push({ star: true });
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
function compileClass(chars: string[], start: number): { test: CharTest; end: number } | null {
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
      hi = chars[i + 1] === "\\" && i + 2 < chars.length ? chars[i + 2]! : chars[i + 1]!;
      i += chars[i + 1] === "\\" ? 3 : 2;
    }
    ranges.push([lo.codePointAt(0)!, hi.codePointAt(0)!]);
  }
  return null;
}

/**
 * `{a,b}` alternatives, expanded into `out`; false past
 * {@link MAX_GLOB_ALTERNATIVES}. Every call either adds one result or splits
 * into two or more, so the work is bounded by the limit times the length.
 */
function expandBraces(pattern: string, out: string[]): boolean {
  const group = firstGroup(pattern);
  if (!group) {
    out.push(pattern);
    return out.length <= MAX_GLOB_ALTERNATIVES;
  }
  const head = pattern.slice(0, group.open);
  const tail = pattern.slice(group.close + 1);
  for (const alternative of group.alternatives) {
    if (!expandBraces(head + alternative + tail, out)) return false;
  }
  return true;
}

/**
 * The leftmost `{...}` holding a top-level comma, with its alternatives, in
 * one pass: an unclosed `{`, or one without a comma, is literal.
 */
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
  const alternatives = cuts.slice(1).map((cut, k) => p.slice(cuts[k]! + 1, cut));
  return { open: best.at, close: best.close, alternatives };
}
