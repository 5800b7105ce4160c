import { failed, ok, type Result } from "../../shared/result.ts";
import type { CapFiles } from "./cap-files.ts";
import { GlobMeter } from "./glob-match.ts";
import { mcpRefusal } from "./mcp-refusals.ts";

/**
 * What one HTTP request to the MCP endpoint may make the vault do, across
 * every call in it. Per call limits alone let a batch multiply them: 100
 * directory_tree calls in 14 KB kept the vault busy for 37 s.
 */

/** JSON-RPC messages in one batch; MCP clients send one at a time (batching left the protocol in 2025-06-18). */
export const MAX_BATCH_MESSAGES = 20;

/**
 * Entries listed in one request, plus one per listing call: one full
 * list_directory (5,001) or about three full directory_tree calls (up to 2,001
 * each). Each listing is a storage call, and nine tree walks of 1,110 entries
 * were 25 s of wall time here.
 */
export const REQUEST_MAX_LISTED = 6_000;

/**
 * Directory listings in one request. Each is a storage call that costs more
 * than the entries it returns (on R2: a head, a folder check and a delimited
 * list): 7–9 ms of the vault's CPU each on the local runtime, where a batch
 * of directory_tree calls that made 300 of them cost 2.0 s of CPU and one
 * that made 100 (answering what it walked) 0.95 s, against the bound of 1 s
 * per request (`RELIABILITY_ONLY=hostile npm run reliability`). A walk that
 * runs out stops and answers what it listed (tree-walk.ts).
 */
export const REQUEST_MAX_LISTINGS = 80;

/** Whether the request may still list a directory: a walk stops there and answers what it has (see tree-walk.ts). */
export function mayList(budget: RequestBudget): boolean {
  return budget.listings < REQUEST_MAX_LISTINGS && budget.listed < REQUEST_MAX_LISTED - 1;
}

/** Characters of file text read in one request: eight whole 2 MiB files (an edit reads its file once per attempt). */
export const REQUEST_MAX_READ_CHARS = 16 * 1024 * 1024;

/**
 * The budget of one request, and the queue its tool calls run through one at
 * a time: a batch never has more than one storage call in flight, so a cheap
 * request on another cap waits behind one step of it, not behind all of them.
 */
export class RequestBudget {
  listings = 0;
  listed = 0;
  read = 0;
  /** Glob matching steps, across every call: a batch of hostile searches is bounded as one is. */
  readonly glob = new GlobMeter();
  private tail: Promise<unknown> = Promise.resolve();

  serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.tail.then(run, run);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/**
 * `files`, charged to `budget`. A listing or read the budget cut short is
 * refused rather than answered in part, so no tool mistakes it for the whole.
 */
export function budgetedFiles(files: CapFiles, budget: RequestBudget): CapFiles {
  return {
    ...files,
    async list(path, maxEntries, depth) {
      if (budget.listings >= REQUEST_MAX_LISTINGS) {
        return failed(mcpRefusal("listingsSpent", { max: REQUEST_MAX_LISTINGS }));
      }
      const left = REQUEST_MAX_LISTED - budget.listed - 1;
      if (left <= 0) return failed(mcpRefusal("listedSpent", { max: REQUEST_MAX_LISTED }));
      budget.listings += 1;
      budget.listed += 1;
      const listing = await files.list(path, Math.min(maxEntries, left), depth);
      if (!listing.ok) return listing;
      budget.listed += listing.value.entries.length;
      if (!listing.value.complete && left < maxEntries)
        return failed(mcpRefusal("listedSpent", { max: REQUEST_MAX_LISTED }));
      return listing;
    },
    async readText(path, maxBytes) {
      const left = REQUEST_MAX_READ_CHARS - budget.read;
      if (left <= 0) return failed(mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS }));
      // UTF-8 takes at least a byte per character, so a file within `left` bytes fits the budget.
      const file = await files.readText(path, Math.min(maxBytes, left));
      if (!file.ok)
        return file.error.code === "too_large" && left < maxBytes
          ? failed(mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS }))
          : file;
      budget.read += file.value.text.length;
      return file;
    },
    // Bytes count as characters: their base64 is longer still, by a fixed third.
    async readBytes(path, maxBytes) {
      const left = REQUEST_MAX_READ_CHARS - budget.read;
      if (left <= 0) return failed(mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS }));
      const file = await files.readBytes(path, Math.min(maxBytes, left));
      if (!file.ok)
        return file.error.code === "too_large" && left < maxBytes
          ? failed(mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS }))
          : file;
      budget.read += file.value.byteLength;
      return file;
    },
  };
}

/**
 * Charges a listing the tool makes through the cap rather than its files (a
 * file's versions) as {@link budgetedFiles} charges one: one listing, and
 * entries counted after with {@link chargeListed}. Answers how many entries
 * of `limit` the request may still list, or the refusal once it is spent.
 */
export function chargeListing(budget: RequestBudget, limit: number): Result<number> {
  if (budget.listings >= REQUEST_MAX_LISTINGS)
    return failed(mcpRefusal("listingsSpent", { max: REQUEST_MAX_LISTINGS }));
  const left = REQUEST_MAX_LISTED - budget.listed - 1;
  if (left <= 0) return failed(mcpRefusal("listedSpent", { max: REQUEST_MAX_LISTED }));
  budget.listings += 1;
  budget.listed += 1;
  return ok(Math.min(limit, left));
}

export function chargeListed(budget: RequestBudget, entries: number): void {
  budget.listed += entries;
}
