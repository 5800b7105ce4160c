import { ok, type Result } from "../shared/result.ts";
import { childPath } from "./memory-path.ts";
import type { TextFiles } from "./text-files.ts";

/** Walks that must see everything (delete and rename of a directory) refuse trees larger than this rather than act on part of one. */
export const MAX_TREE_ENTRIES = 1000;

/** One thing found under a walked directory. */
export interface TreeEntry {
  /** Relative to the walked directory, `/`-separated. */
  path: string;
  /** 1 for direct children. */
  depth: number;
  type: "file" | "dir";
  /** A file's bytes; for a directory, the bytes of every walked file beneath it. */
  size: number;
  /** A directory left unlisted because of `maxDepth`. */
  truncated?: boolean;
}

export interface Tree {
  /** Depth first, each directory before its contents, siblings in UTF-8 order. */
  entries: TreeEntry[];
  /** Bytes of every walked file. */
  size: number;
  /** False when the walk stopped at `maxEntries`: some entries (and bytes) are missing. */
  complete: boolean;
}

export interface TreeWalkOptions {
  /** Stop after this many entries in all. */
  maxEntries: number;
  /** Skip names starting with `.`, and `node_modules`, with everything beneath them (as the reference's view does). */
  skipHidden: boolean;
  /** Do not list directories deeper than this (1: direct children only); their entries get `truncated`. */
  maxDepth?: number;
}

/**
 * Walks a directory of the cap one listing at a time, bounded by entry count
 * and by everything listed (hidden entries too), so a huge tree cannot turn
 * one tool call into unbounded work. Depth needs no bound of its own: each
 * level costs an entry, and keys of at most 1,024 bytes hold at most 512
 * levels. A directory that vanishes mid-walk is skipped, as the reference
 * skips unreadable ones.
 *
 * @example
 * const tree = await walkTree(files, "notes", { maxEntries: 1000, skipHidden: true });
 */
export async function walkTree(files: TextFiles, dir: string, options: TreeWalkOptions): Promise<Result<Tree>> {
  const entries: TreeEntry[] = [];
  let complete = true;
  // Listing calls plus entries listed, skipped hidden ones included: a walk that fits maxEntries
  // needs at most 2 × maxEntries + 1, and nothing hidden can make it list more.
  const maxListed = 2 * options.maxEntries + 1;
  let listed = 0;

  const walk = async (relDir: string, depth: number): Promise<Result<number>> => {
    const budget = Math.min(options.maxEntries - entries.length, maxListed - listed - 1);
    if (budget <= 0) {
      complete = false;
      return ok(0);
    }
    listed += 1;
    const listing = await files.list(relDir === "" ? dir : childPath(dir, relDir), budget);
    if (!listing.ok) return depth > 1 && listing.error.code === "not_found" ? ok(0) : listing;
    listed += listing.value.entries.length;
    if (!listing.value.complete) complete = false;
    let total = 0;
    for (const item of listing.value.entries) {
      if (options.skipHidden && (item.name.startsWith(".") || item.name === "node_modules")) continue;
      if (entries.length >= options.maxEntries) {
        complete = false;
        break;
      }
      const path = relDir === "" ? item.name : `${relDir}/${item.name}`;
      const entry: TreeEntry = { path, depth, type: item.type, size: item.size ?? 0 };
      entries.push(entry);
      if (item.type === "dir" && depth >= (options.maxDepth ?? Infinity)) {
        entry.truncated = true;
      } else if (item.type === "dir") {
        const inner = await walk(path, depth + 1);
        if (!inner.ok) return inner;
        entry.size = inner.value;
      }
      total += entry.size;
    }
    return ok(total);
  };

  const size = await walk("", 1);
  if (!size.ok) return size;
  return ok({ entries, size: size.value, complete });
}
