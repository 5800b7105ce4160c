import { refuse } from "../shared/refusals.ts";
import { failed, ok, type Result } from "../shared/result.ts";
import { decodeChunksStrict } from "../shared/strict-utf8.ts";
import type { Stat, WriteResult } from "../shared/wire-types.ts";
import { memoryRefusal } from "./memory-refusals.ts";

/**
 * The few cap operations the memory tool (and the MCP tools) need, as text.
 * Paths are relative to the cap's root, exactly as the cap's parser expects
 * them (`""` is the root); the cap judges every one of them again.
 *
 * Two implementations: over a cap's Durable Object stub (inside the worker)
 * and over the SDK's `FsCap` (in apps). Failures are values carrying the wire
 * code, never exceptions.
 *
 * @example
 * const file = await files.readText("notes/today.md", MAX_TEXT_BYTES);
 * if (file.ok) await files.writeText("notes/today.md", file.value.text + "more\n", { ifMatch: file.value.etag });
 */
export interface TextFiles {
  /** A whole file as UTF-8 text; `too_large` past `maxBytes`, `bad_request` when it is not UTF-8. */
  readText(path: string, maxBytes: number): Promise<Result<TextFile>>;
  /**
   * Creates or replaces a file; with `ifMatch`, only while the file still has that etag, with
   * `ifNoneMatch: "*"` only while nothing is there (else `precondition_failed`).
   */
  writeText(
    path: string,
    text: string,
    options?: { ifMatch?: string; ifNoneMatch?: "*" },
  ): Promise<Result<WriteResult>>;
  stat(path: string): Promise<Result<Stat>>;
  /**
   * Direct children in UTF-8 order, following cursors; at most `maxEntries` of them.
   * With `depth` other than 1, the recursive listing of `GET /list?depth=` (0: every
   * file below, names relative to `path`; N: down to N levels, deeper folders once).
   */
  list(path: string, maxEntries: number, depth?: number): Promise<Result<Listing>>;
  /** Deletes one file. */
  delete(path: string): Promise<Result<null>>;
  /** Moves one file; an existing destination is a `conflict`, never overwritten. */
  move(from: string, to: string): Promise<Result<null>>;
}

/** What the memory tool's `create`, `delete` and `rename` need besides: folders that stay while empty, as the reference's do. */
export interface MemoryFiles extends TextFiles {
  /** Makes a folder, and any missing above it; an existing one is success. */
  makeFolder(path: string): Promise<Result<null>>;
  /** Removes an empty folder (`conflict` while it holds anything, `not_found` when absent). */
  removeFolder(path: string): Promise<Result<null>>;
}

export interface TextFile {
  text: string;
  /** Unquoted hex MD5, for `ifMatch`. */
  etag: string;
}

export interface DirEntry {
  name: string;
  type: "file" | "dir";
  size?: number;
}

export interface Listing {
  entries: DirEntry[];
  /** False when the directory holds more than `maxEntries`. */
  complete: boolean;
}

/** Files the memory tool and the MCP tools read whole; larger ones are `too_large`. */
export const MAX_TEXT_BYTES = 2 * 1024 * 1024;

export const TEXT_CONTENT_TYPE = "text/plain; charset=utf-8";

/**
 * Reads a body as UTF-8, refusing more than `maxBytes` without buffering them.
 * A BOM is kept, so an edit never silently drops it.
 */
export async function readTextBody(body: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Result<string>> {
  if (body === null) return ok("");
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  const text = decodeChunksStrict(chunks);
  return text === null ? failed(memoryRefusal("notUtf8")) : ok(text);
}

/**
 * Follows listing cursors until the last page or `maxEntries`, whichever
 * comes first, so one huge directory cannot exhaust the caller.
 */
export async function collectPages(
  fetchPage: (cursor: string | null) => Promise<Result<{ entries: DirEntry[]; cursor: string | null }>>,
  maxEntries: number,
  maxPages = Number.POSITIVE_INFINITY,
): Promise<Result<Listing>> {
  const entries: DirEntry[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    // A recursive page may be short, even empty, when its walk budget ran out
    // in empty folders: the page count bounds the work, not the entry count.
    if (pages++ === maxPages) return ok({ entries, complete: false });
    const page = await fetchPage(cursor);
    if (!page.ok) return page;
    for (const e of page.value.entries) {
      if (entries.length === maxEntries) return ok({ entries, complete: false });
      entries.push(
        e.type === "file" ? { name: e.name, type: "file", size: e.size ?? 0 } : { name: e.name, type: "dir" },
      );
    }
    // A cursor handed back unchanged would loop forever.
    if (page.value.cursor !== null && page.value.cursor === cursor) return refuse("unavailable");
    if (page.value.cursor !== null && entries.length === maxEntries) return ok({ entries, complete: false });
    cursor = page.value.cursor;
  } while (cursor !== null);
  return ok({ entries, complete: true });
}

export function tooLarge<T>(maxBytes: number): Result<T> {
  return failed(memoryRefusal("textTooLarge", { limit: maxBytes }));
}

export function utf8Bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
