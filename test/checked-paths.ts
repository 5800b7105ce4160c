import { type CheckedOf, checkKey, checkRoot, type PathKind, parsePath } from "../durable-objects/path-check.ts";
import { parseRelPath } from "../shared/rel-path.ts";
import type { Result } from "../shared/result.ts";
import type { CheckedDir, CheckedEntry, CheckedFile, CheckedRoot } from "../storage-adapters/checked-path.ts";
import type { Root } from "../storage-adapters/storage-adapter.ts";

/**
 * Checked paths for tests that drive a storage adapter directly: made by the
 * chokepoint's own path step (durable-objects/path-check.ts), as the cap
 * object makes them, so an adapter never sees a path the vault would refuse.
 */
export function checked<K extends PathKind>(root: Root, text: string, kind: K): Result<CheckedOf<K>> {
  const path = parsePath(text, kind);
  return path.ok ? checkKey(root, path.value, kind) : path;
}

function must<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`the chokepoint refuses this path: ${result.error.code}`);
  return result.value;
}

export const fileAt = (root: Root, text: string): CheckedFile => must(checked(root, text, "file"));
export const dirAt = (root: Root, text: string): CheckedDir => must(checked(root, text, "dir"));
export const entryAt = (root: Root, text: string): CheckedEntry => must(checked(root, text, "entry"));

/** A root as a cap (or an admin) would hold it. */
export function rootAt(root: Root): CheckedRoot {
  const path = parseRelPath(root.at(-1) ?? "");
  if (!path.ok) throw new Error(`not a root: ${path.error.code}`);
  return must(checkRoot(root, path.value, "pathTooLong"));
}
