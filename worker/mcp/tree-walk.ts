import type { DirEntry } from "../../memory-tool/text-files.ts";
import { ok, type Result } from "../../shared/result.ts";
import type { CapFiles } from "./cap-files.ts";
import { REQUEST_MAX_LISTED, REQUEST_MAX_LISTINGS, REQUEST_MAX_STORAGE_CALLS } from "./request-budget.ts";

/** One entry found under a walked directory. */
export interface WalkEntry {
  /** Relative to the walked directory, `/`-separated. */
  path: string;
  /** 1 for direct children. */
  depth: number;
  type: DirEntry["type"];
  /** A directory left unlisted because of `maxDepth`. */
  truncated?: true;
}

export interface WalkOptions {
  /** Stop after this many entries kept. */
  maxEntries: number;
  /** Do not list directories deeper than this (1: direct children only). */
  maxDepth: number;
  /** Leave an entry (and all beneath it) out; a failure stops the walk. */
  skip(path: string): Result<boolean>;
  /**
   * Whether another directory may be listed (the request's budget). When not,
   * the walk stops there with what it has: deeper directories are marked
   * truncated and the result incomplete, rather than the whole call refused.
   */
  mayList?: () => boolean;
}

/** How a walk ended short of the whole tree, if it did. */
export type WalkCut = "entries" | "listings" | null;

/**
 * Walks a directory of the cap depth first, each directory before its
 * contents, siblings in the listing's order. Bounded like memory-tree.ts:
 * by entries kept and by everything listed (skipped entries too), so a call
 * costs at most 2 × maxEntries + 1 listed entries and listing calls; the
 * request's budget bounds it again. A directory that vanishes mid-walk is
 * skipped, as the official server skips unreadable ones.
 */
export async function walkEntries(
  files: CapFiles,
  dir: string,
  options: WalkOptions,
): Promise<Result<{ entries: WalkEntry[]; cut: WalkCut }>> {
  const entries: WalkEntry[] = [];
  const maxListed = 2 * options.maxEntries + 1;
  let listed = 0;
  let cut: WalkCut = null;

  const walk = async (rel: string, depth: number): Promise<Result<null>> => {
    const budget = Math.min(options.maxEntries - entries.length, maxListed - listed - 1);
    if (budget <= 0) {
      cut ??= "entries";
      return ok(null);
    }
    listed += 1;
    const listing = await files.list(rel === "" ? dir : dir === "" ? rel : `${dir}/${rel}`, budget);
    if (!listing.ok) return depth > 1 && listing.error.code === "not_found" ? ok(null) : listing;
    listed += listing.value.entries.length;
    if (!listing.value.complete) cut ??= "entries";
    for (const item of listing.value.entries) {
      const path = rel === "" ? item.name : `${rel}/${item.name}`;
      if (entries.length >= options.maxEntries) {
        cut ??= "entries";
        break;
      }
      const skipped = options.skip(path);
      if (!skipped.ok) return skipped;
      if (skipped.value) continue;
      const entry: WalkEntry = { path, depth, type: item.type };
      entries.push(entry);
      if (item.type !== "dir") continue;
      if (depth >= options.maxDepth) entry.truncated = true;
      else if (options.mayList && !options.mayList()) {
        entry.truncated = true;
        cut ??= "listings";
      } else {
        const inner = await walk(path, depth + 1);
        if (!inner.ok) return inner;
      }
    }
    return ok(null);
  };

  const walked = await walk("", 1);
  return walked.ok ? ok({ entries, cut }) : walked;
}

/** The line a walking tool adds to its answer when the walk stopped short, naming why. */
export function walkCutNote(cut: WalkCut, maxEntries: number): string {
  if (cut === "entries") return `\n(stopped after ${maxEntries} entries)`;
  if (cut === "listings")
    return `\n(stopped early: this request used its budget of ${REQUEST_MAX_LISTINGS} directory listings, ${REQUEST_MAX_LISTED} listed entries or ${REQUEST_MAX_STORAGE_CALLS} storage calls; some directories were not listed, so ask for a subdirectory in another request)`;
  return "";
}
