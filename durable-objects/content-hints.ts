import type { WritePreconditions } from "../shared/http-conditions.ts";
import type { Right } from "../shared/rights.ts";
import type { ListEntry, Stat } from "../shared/wire-types.ts";

/**
 * Etags (and sha256) are the plain MD5 (SHA-256) of a file's bytes: an unkeyed content hash. Shown to
 * a cap that may list but not read, one lets it confirm guesses offline (a
 * 4-digit PIN falls in 10,000 hashes). So without `read`, stats and listings
 * keep name, type, size and time, and lose the etag.
 */
export function statFor(rights: readonly Right[], stat: Stat): Stat {
  if (rights.includes("read") || stat.type !== "file") return stat;
  const { etag: _hidden, sha256: _alsoHidden, ...rest } = stat;
  return rest;
}

export function entriesFor(rights: readonly Right[], entries: ListEntry[]): ListEntry[] {
  if (rights.includes("read")) return entries;
  return entries.map(({ etag: _hidden, sha256: _alsoHidden, ...rest }) => rest);
}

/**
 * The same oracle through a write: `If-Match: "<md5 of a guess>"` answers 412
 * or succeeds, and rewriting the guessed bytes leaves no trace. Without `read`
 * a write may only be conditioned on existence (`*`), which a plain write's
 * 201-or-200 shows anyway.
 */
export function etagConditionWithoutRead(rights: readonly Right[], request: WritePreconditions): boolean {
  if (rights.includes("read")) return false;
  return [request.ifMatch, request.ifNoneMatch].some((h) => h !== undefined && h.trim() !== "*");
}
