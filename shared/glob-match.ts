import type { CharTest, Glob, Segment, SegmentPart } from "./glob-compile.ts";

/**
 * Steps one tool call's glob matching may take. A step is one character
 * compared or one segment state advanced; matching one path costs at most
 * (path length × glob length) steps whatever the glob, so a hostile glob
 * (`*a*a*a…b` on long names) costs a bounded amount and is then refused.
 */
export const MAX_GLOB_STEPS = 5_000_000;

export class GlobMeter {
  steps = 0;
  get spent(): boolean {
    return this.steps > MAX_GLOB_STEPS;
  }
}

/**
 * Whether `path` (relative, `/`-separated, no empty segments) matches `glob`;
 * `null` once `meter` is spent. Segments are matched as a set of states
 * (one per glob segment), never by backtracking over `**`.
 */
export function globMatches(glob: Glob, path: string, meter: GlobMeter): boolean | null {
  if (glob.comment) return false;
  const segments = path.split("/").map((s) => Array.from(s));
  for (const alternative of glob.alternatives) {
    const matched = alternativeMatches(alternative, segments, meter);
    if (matched === null) return null;
    if (matched) return !glob.negated;
  }
  return glob.negated;
}

function alternativeMatches(glob: Segment[], path: string[][], meter: GlobMeter): boolean | null {
  let states = new Uint8Array(glob.length + 1);
  enter(glob, states, 0);
  for (const segment of path) {
    const next = new Uint8Array(glob.length + 1);
    meter.steps += glob.length + 1;
    let alive = false;
    for (let at = 0; at < glob.length; at++) {
      if (states[at] === 0) continue;
      const part = glob[at]!;
      if (part === "**") alive = enter(glob, next, at);
      else if (part === "any" || segmentMatches(part, segment, meter)) alive = enter(glob, next, at + 1);
      if (meter.spent) return null;
    }
    if (!alive) return false;
    states = next;
  }
  return states[glob.length] === 1;
}

/**
 * Marks state `at`, and the states after it that a `**` matching no
 * segment reaches. Stops at a state already marked, so marking every state
 * of one step costs one pass over the glob.
 */
function enter(glob: Segment[], states: Uint8Array, at: number): true {
  for (let i = at; states[i] === 0; i++) {
    states[i] = 1;
    if (glob[i] !== "**") break;
  }
  return true;
}

/**
 * One segment against its text, by the usual wildcard walk: on a mismatch,
 * go back to just after the last star and let it take one more character.
 * Only the last star is ever revisited, so this is (text × parts) at most.
 */
function segmentMatches(parts: SegmentPart[], text: string[], meter: GlobMeter): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let starT = 0;
  while (t < text.length) {
    if (++meter.steps > MAX_GLOB_STEPS) return false;
    const part = parts[p];
    if (part && "star" in part) {
      star = p++;
      starT = t;
    } else if (part && charMatches(part.char, text[t]!, meter)) {
      p++;
      t++;
    } else if (star >= 0) {
      p = star + 1;
      t = ++starT;
    } else return false;
  }
  while (p < parts.length && "star" in parts[p]!) p++;
  // A lone star does not match an empty name (there are none in a path anyway).
  return p === parts.length && text.length > 0;
}

function charMatches(test: CharTest, c: string, meter: GlobMeter): boolean {
  if (test === null) return true;
  if (typeof test === "string") return test === c;
  meter.steps += test.ranges.length;
  const code = c.codePointAt(0)!;
  const inside = test.ranges.some(([lo, hi]) => code >= lo && code <= hi);
  return inside !== test.negated;
}
