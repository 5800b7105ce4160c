import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GlobMeter } from "../../shared/glob-match.ts";
import { failed, ok, type Result } from "../../shared/result.ts";
import type { CapFiles } from "./cap-files.ts";
import { mcpRefusal } from "./mcp-refusals.ts";
import { errorResult } from "./tool-result.ts";

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
 * Calls to the cap's storage in one request, of every kind (reads, stats,
 * writes, listings, a listing's further pages of 1,000): each is a
 * subrequest, which Cloudflare caps at 1,000 per request, and a few ms of
 * the vault's CPU: 200, listings among them, keep a request under 1 s of CPU.
 */
export const REQUEST_MAX_STORAGE_CALLS = 200;

/** Directory listings among those calls: each costs 7–9 ms of CPU, so 80 stay under the bound of 1 s a request. */
export const REQUEST_MAX_LISTINGS = 80;

/** Whether the request may still list a directory: a walk stops there and answers what it has (see tree-walk.ts). */
export function mayList(budget: RequestBudget): boolean {
  return (
    budget.listings < REQUEST_MAX_LISTINGS &&
    budget.listed < REQUEST_MAX_LISTED - 1 &&
    budget.calls < REQUEST_MAX_STORAGE_CALLS
  );
}

/** Characters of file text read in one request: eight whole 2 MiB files (an edit reads its file once per attempt). */
export const REQUEST_MAX_READ_CHARS = 16 * 1024 * 1024;

/**
 * Characters of every answer of one request, `content` and
 * `structuredContent` both (a text tool gives its text in each): one
 * 8 MiB media file as base64 or four whole 2 MiB text files. Building and
 * sending tens of MB held up other caps' requests.
 */
export const REQUEST_MAX_ANSWER_CHARS = 16 * 1024 * 1024;

/**
 * The budget of one request, and the queue its tool calls run through one at
 * a time: a batch never has more than one storage call in flight, so a cheap
 * request on another cap waits behind one step of it, not behind all of them.
 */
export class RequestBudget {
  calls = 0;
  listings = 0;
  listed = 0;
  read = 0;
  answered = 0;
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
 * Charges `calls` storage calls to `budget` if they all fit: the refusal
 * otherwise, and nothing charged. A tool that makes several (read_multiple_files)
 * asks for all at once, so it is answered whole or refused whole.
 */
export function chargeCalls(budget: RequestBudget, calls = 1): Result<null> {
  if (budget.calls + calls > REQUEST_MAX_STORAGE_CALLS)
    return failed(mcpRefusal("callsSpent", { max: REQUEST_MAX_STORAGE_CALLS }));
  budget.calls += calls;
  return ok(null);
}

/** Whether `calls` more storage calls fit the request's budget; charges nothing. */
export function callsFit(budget: RequestBudget, calls: number): Result<null> {
  return budget.calls + calls > REQUEST_MAX_STORAGE_CALLS
    ? failed(mcpRefusal("callsSpent", { max: REQUEST_MAX_STORAGE_CALLS }))
    : ok(null);
}

/**
 * Runs one tool call within the request's answer budget. A read-only call
 * whose answer would not fit is refused instead (it changed nothing); any
 * other call's answer is kept, so no write that landed is reported refused.
 */
export async function answerWithin(
  budget: RequestBudget,
  readOnly: boolean,
  run: () => Promise<unknown>,
): Promise<unknown> {
  if (budget.answered >= REQUEST_MAX_ANSWER_CHARS) return errorResult(answerSpent());
  const answer = (await run()) as CallToolResult;
  const chars = answerChars(answer);
  if (readOnly && answer.isError !== true && budget.answered + chars > REQUEST_MAX_ANSWER_CHARS)
    return errorResult(answerSpent());
  budget.answered += chars;
  return answer;
}

/** Characters an answer carries: every string in its content and structured content. */
export function answerChars(answer: { content?: unknown; structuredContent?: unknown }): number {
  return stringChars(answer.content) + stringChars(answer.structuredContent);
}

function stringChars(value: unknown): number {
  if (typeof value === "string") return value.length;
  if (typeof value !== "object" || value === null) return 0;
  let chars = 0;
  for (const item of Array.isArray(value) ? value : Object.values(value)) chars += stringChars(item);
  return chars;
}

/**
 * `files`, charged to `budget`: one storage call for each, before it is made.
 * A listing or read the budget cut short is refused rather than answered in
 * part, so no tool mistakes it for the whole.
 */
export function budgetedFiles(files: CapFiles, budget: RequestBudget): CapFiles {
  const charged =
    <A extends unknown[], T>(call: (...args: A) => Promise<Result<T>>) =>
    async (...args: A): Promise<Result<T>> => {
      const spent = chargeCalls(budget);
      return spent.ok ? call(...args) : spent;
    };
  return {
    writeText: charged(files.writeText),
    stat: charged(files.stat),
    delete: charged(files.delete),
    move: charged(files.move),
    checkFolder: charged(files.checkFolder),
    async list(path, maxEntries, depth) {
      const left = chargeListing(budget, maxEntries);
      if (!left.ok) return left;
      const listing = await files.list(path, left.value, depth);
      if (!listing.ok) return listing;
      chargeListed(budget, listing.value.entries.length);
      if (!listing.value.complete && left.value < maxEntries)
        return failed(mcpRefusal("listedSpent", { max: REQUEST_MAX_LISTED }));
      return listing;
    },
    async readText(path, maxBytes) {
      const left = REQUEST_MAX_READ_CHARS - budget.read;
      if (left <= 0) return failed(mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS }));
      const spent = chargeCalls(budget);
      if (!spent.ok) return spent;
      // UTF-8 takes at least a byte per character, so a file within `left` bytes fits the budget.
      const file = await files.readText(path, Math.min(maxBytes, left));
      if (!file.ok)
        return file.error.code === "too_large" && left < maxBytes
          ? failed(mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS }))
          : file;
      budget.read += file.value.text.length;
      return file;
    },
    // Only read_media_file reads bytes, and answers them once as base64: 4 characters per 3 bytes.
    async readBytes(path, maxBytes) {
      const readLeft = REQUEST_MAX_READ_CHARS - budget.read;
      const answerLeft = Math.floor(((REQUEST_MAX_ANSWER_CHARS - budget.answered) * 3) / 4);
      const spentWhy = readLeft <= answerLeft ? readSpent() : answerSpent();
      const left = Math.min(readLeft, answerLeft);
      if (left <= 0) return failed(spentWhy);
      const spent = chargeCalls(budget);
      if (!spent.ok) return spent;
      const file = await files.readBytes(path, Math.min(maxBytes, left));
      if (!file.ok) return file.error.code === "too_large" && left < maxBytes ? failed(spentWhy) : file;
      budget.read += file.value.byteLength;
      return file;
    },
  };
}

const readSpent = () => mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS });
export const answerSpent = () => mcpRefusal("answerSpent", { max: REQUEST_MAX_ANSWER_CHARS });

/**
 * Charges a listing as one storage call and one listing (and one listed
 * entry, so empty listings count too); entries are counted after with
 * {@link chargeListed}. Answers how many entries of `limit` the request may
 * still list, or the refusal once it is spent. Tools that list through the
 * cap rather than its files (a file's versions) charge it here too.
 */
export function chargeListing(budget: RequestBudget, limit: number): Result<number> {
  if (budget.listings >= REQUEST_MAX_LISTINGS)
    return failed(mcpRefusal("listingsSpent", { max: REQUEST_MAX_LISTINGS }));
  const left = REQUEST_MAX_LISTED - budget.listed - 1;
  if (left <= 0) return failed(mcpRefusal("listedSpent", { max: REQUEST_MAX_LISTED }));
  const spent = chargeCalls(budget);
  if (!spent.ok) return spent;
  budget.listings += 1;
  budget.listed += 1;
  return ok(Math.min(limit, left));
}

/** Counts a listing's entries, and its pages past the first (1,000 entries each) as storage calls. */
export function chargeListed(budget: RequestBudget, entries: number): void {
  budget.listed += entries;
  budget.calls += Math.floor(entries / LISTING_PAGE);
}

/** Entries per page of a directory listing (worker/cap-stub-text-files.ts); a page of versions holds at most 100. */
const LISTING_PAGE = 1000;
