import type { RelPath } from "../shared/rel-path.ts";

declare const checked: unique symbol;

/**
 * Where a cap points: the levels of its root, outermost first. Level 0 is the
 * prefix an admin chose for the root cap; each `subdir` appends the path it
 * was minted for. Every level is `""` or a relative path ending in `/`.
 *
 * R2 simply concatenates the levels. The disk backend resolves them one by one
 * so that a symlink can never take a child further than its parent reached.
 */
export type Root = readonly string[];

/**
 * A path the cap object's chokepoint (durable-objects/path-check.ts) has
 * checked, after the cap's liveness and rights: parsed, named where a file is
 * needed, and with its whole key (root levels + path) within R2's 1,024
 * bytes. Only that module makes one (storage adapters cannot import it), so
 * an adapter that takes one knows all of this without checking again.
 *
 * The root levels travel with it, towards the adapter only: R2 uses `key`,
 * the disk host resolves `root` level by level (and, behind its process
 * boundary, judges every name again itself).
 */
interface Checked<K extends string> {
  readonly [checked]: K;
  readonly root: Root;
  readonly path: RelPath;
  /**
   * The storage key: for a file (and a stat below the root) the levels and
   * the path joined; for a folder the same ending in `/`, or the root's own
   * prefix (`""` or ending in `/`) for the cap's root; for a new root, its prefix.
   */
  readonly key: string;
}

/** A file: at least one segment. For read, write, remove and both ends of a move. */
export type CheckedFile = Checked<"file">;
/** A folder to list, the cap's root included. */
export type CheckedDir = Checked<"dir">;
/** What a stat names: the cap's root, or a file's key (which may turn out to be a folder). */
export type CheckedEntry = Checked<"entry">;

/**
 * A new cap's root (a child's, or an admin's): levels that join (`key`) to
 * `""` or a valid relative prefix ending in `/`, under 1,024 bytes. `path` is
 * what it adds below the parent's root.
 */
export type CheckedRoot = Checked<"root">;
