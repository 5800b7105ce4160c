import { refuse } from "../shared/refusals.ts";
import { parseRelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";

/**
 * The host judges every name again with the shared parser: it is the last
 * code between a cap and the filesystem, so a bug upstream must not become a
 * path outside. Root levels arrive as the cap holds them (`""` or `a/b/`).
 */
export function checkedLevels(levels: readonly string[]): Result<string[][]> {
  const out: string[][] = [];
  for (const level of levels) {
    if (level === "") {
      out.push([]);
      continue;
    }
    if (!level.endsWith("/")) return refuse("invalidPath");
    const parsed = parseRelPath(level);
    if (!parsed.ok) return parsed;
    out.push([...parsed.value.segments]);
  }
  return ok(out);
}

/** Path segments exactly as the parser would have produced them, or `invalid_path`. */
export function checkedSegments(segments: readonly string[]): Result<string[]> {
  if (segments.length === 0) return ok([]);
  const parsed = parseRelPath(segments.join("/"));
  if (!parsed.ok) return parsed;
  const same =
    parsed.value.segments.length === segments.length && parsed.value.segments.every((s, i) => s === segments[i]);
  return same ? ok([...segments]) : refuse("invalidPath");
}
