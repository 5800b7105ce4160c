import { refuse } from "../shared/refusals.ts";
import { childRoot, MAX_KEY_BYTES, parseRelPath, type RelPath, utf8Length } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import type { CheckedDir, CheckedEntry, CheckedFile, CheckedRoot } from "../storage-adapters/checked-path.ts";
import type { Root } from "../storage-adapters/storage-adapter.ts";

/**
 * The path step of the chokepoint, the only maker of checked paths (see
 * storage-adapters/checked-path.ts). CapObject.authorize runs it after
 * liveness and rights; RootRegistry runs `checkRoot` for an admin's root.
 */
export type PathKind = "file" | "dir" | "entry" | "childRoot";
export type CheckedOf<K extends PathKind> = K extends "file"
  ? CheckedFile
  : K extends "dir"
    ? CheckedDir
    : K extends "entry"
      ? CheckedEntry
      : CheckedRoot;

/** The spelling: the one parser, and a name where a file is needed. */
export function parsePath(raw: string | null, kind: PathKind): Result<RelPath> {
  const path = parseRelPath(raw);
  if (path.ok && kind === "file" && path.value.segments.length === 0) return refuse("needsFileName");
  return path;
}

/** The key: the cap's root levels and the path joined, within R2's limit on every backend. */
export function checkKey<K extends PathKind>(root: Root, path: RelPath, kind: K): Result<CheckedOf<K>> {
  if (kind === "childRoot") {
    const levels = path.text === "" ? root : [...root, childRoot("", path)];
    return checkRoot(levels, path, "pathTooLong") as Result<CheckedOf<K>>;
  }
  const prefix = root.join("");
  const key = path.text === "" ? prefix : kind === "dir" ? `${prefix}${path.text}/` : `${prefix}${path.text}`;
  if (utf8Length(key) > MAX_KEY_BYTES) return refuse("pathTooLong");
  return ok({ root, path, key } as unknown as CheckedOf<K>);
}

/**
 * A new cap's root: its levels join to a prefix that parses as a path and
 * leaves room below it for a name (so under 1,024 bytes).
 */
export function checkRoot(levels: Root, path: RelPath, tooLong: "pathTooLong" | "prefixTooLong"): Result<CheckedRoot> {
  const prefix = levels.join("");
  if (utf8Length(prefix) >= MAX_KEY_BYTES) return refuse(tooLong);
  if (prefix !== "") {
    const asPath = parseRelPath(prefix);
    if (!asPath.ok) return asPath;
  }
  return ok({ root: levels, path, key: prefix } as unknown as CheckedRoot);
}
