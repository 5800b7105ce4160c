import { compileGlob, type Glob } from "../../shared/glob-compile.ts";
import { type GlobMeter, globMatches, MAX_GLOB_STEPS } from "../../shared/glob-match.ts";
import { failed, ok, type Result } from "../../shared/result.ts";
import { mcpRefusal } from "./mcp-refusals.ts";

/** excludePatterns per call; the official server takes any number, an agent a handful. */
export const MAX_EXCLUDE_PATTERNS = 100;

/**
 * Characters all of one call's globs may expand to (braces multiply them):
 * what the matcher holds in memory and walks for every path.
 */
export const MAX_EXPANDED_GLOB_CHARS = 16_384;

export function compileGlobs(patterns: readonly string[]): Result<Glob[]> {
  const globs: Glob[] = [];
  let expanded = 0;
  for (const pattern of patterns) {
    const glob = compileGlob(pattern);
    if (!glob.ok) return glob;
    expanded += glob.value.size;
    if (expanded > MAX_EXPANDED_GLOB_CHARS) {
      return failed(mcpRefusal("globsTooLarge", { max: MAX_EXPANDED_GLOB_CHARS }));
    }
    globs.push(glob.value);
  }
  return ok(globs);
}

/**
 * directory_tree's exclusions, as the official server reads them: a pattern
 * with `*` is matched as it is; one without also matches the name at any
 * depth (`**\/p`) and everything under it (`**\/p/**`).
 */
export function compileTreeExclusions(patterns: readonly string[]): Result<Glob[]> {
  return compileGlobs(patterns.flatMap((p) => (p.includes("*") ? [p] : [p, `**/${p}`, `**/${p}/**`])));
}

/** Whether any glob matches `path`; refused once the request's matching steps are spent. */
export function anyMatches(globs: readonly Glob[], path: string, meter: GlobMeter): Result<boolean> {
  for (const glob of globs) {
    const matched = globMatches(glob, path, meter);
    if (matched === null) return failed(mcpRefusal("globTooCostly", { max: MAX_GLOB_STEPS }));
    if (matched) return ok(true);
  }
  return ok(false);
}
