import type { ByteRange, WritePreconditions } from "../shared/http-conditions.ts";
import type { Result } from "../shared/result.ts";
import type { ListEntry, Stat, WriteResult } from "../shared/wire-types.ts";
import type { CheckedDir, CheckedEntry, CheckedFile, CheckedRoot } from "./checked-path.ts";

export type { Root } from "./checked-path.ts";

export interface FileMeta {
  size: number;
  /** Hex MD5 of the content, unquoted (R2's `etag`); every backend computes the same one. */
  etag: string;
  /** Hex SHA-256 of the content, kept from its write; `null` when not known (an R2 object stored before). */
  sha256: string | null;
  /** ISO 8601. */
  modified: string;
  contentType: string;
}

export type ReadOutcome =
  | { status: "body"; meta: FileMeta; body: ReadableStream<Uint8Array>; range: ByteRange | null }
  | { status: "not_modified"; meta: FileMeta }
  | { status: "unsatisfiable"; meta: FileMeta };

export interface StorageReadOptions {
  /** The raw `Range` header, judged with `parseByteRange` against the current size. */
  range?: string | null | undefined;
  ifNoneMatch?: string | null | undefined;
}

export interface StorageWriteOptions extends WritePreconditions {
  /** Exact body length in bytes; the body must deliver exactly this many. */
  length: number;
  contentType: string;
  /**
   * Aborted when the cap is revoked or expires mid-write. The body is cut
   * then anyway; this lets a backend stop work it does after the body (R2's
   * seal), so the revocation waiting for the write is not kept waiting.
   */
  signal?: AbortSignal | undefined;
  /**
   * Also keep these bytes as the version blob of this name (version-blobs.ts),
   * or no copy when absent. A write that fails keeps no blob.
   */
  keepAs?: string | null | undefined;
}

/** A stored write, and whether its bytes were also kept as the asked version blob. */
export interface StoredWrite extends WriteResult {
  kept: boolean;
  /** The kept bytes themselves, when small enough to go in the journal's row instead of a blob (version-blobs.ts). */
  inline?: Uint8Array | undefined;
}

/** A version blob's bytes. */
export interface VersionBytes {
  size: number;
  body: ReadableStream<Uint8Array>;
}

/** What a listing asks: names after `after`; `depth` 1 (or absent) lists direct children, else see tree-page.ts. */
export interface StorageListOptions {
  after: string | null;
  limit: number;
  depth?: number | undefined;
}

/** One page of a storage listing, before the cap object turns `next` into an opaque cursor. */
export interface StorageListPage {
  entries: ListEntry[];
  /** The name to continue after, or `null` on the last page. */
  next: string | null;
}

/**
 * One storage backend. The cap object has already decided authority (the cap
 * is alive, holds the right, and the path is checked: see checked-path.ts,
 * which only the cap object can make); an adapter re-checks none of it and
 * only decides what the storage says, answering identically for the same history:
 *
 * - A directory exists once made (makeDir) or once it held a file, until
 *   removed (removeDir) while empty; the root always exists.
 * - read: a file's bytes; `conflict` for a directory; `not_found` otherwise.
 * - write: `conflict` when an ancestor is a file or the target is a directory;
 *   `precondition_failed` when `If-Match`/`If-None-Match` fail; never a partial file.
 * - remove: `conflict` for a directory; `not_found` when nothing is there.
 *   The folder holding the file stays, empty.
 * - makeDir: the folder and any missing above it; an existing one is success;
 *   `conflict` (fileDirectoryClash) when it or an ancestor is a file.
 * - removeDir: an empty folder (its parent stays); `conflict` when it holds
 *   anything or is a file; `not_found` when nothing is there.
 * - stat: file meta, `{ type: "dir" }`, or `not_found`.
 * - list: direct children sorted by UTF-8 bytes, names after `after`;
 *   `conflict` for a file, `not_found` for a missing non-root directory.
 *   With `depth` other than 1, the files below, as TreePage (tree-page.ts) builds them.
 * - move: files only; `conflict` when the destination exists (unless
 *   `overwrite`) or is a directory; the source survives any failed copy.
 * - prepareRoot: a new cap root is acceptable (`conflict` if it is a file).
 */
export interface StorageAdapter {
  read(at: CheckedFile, options: StorageReadOptions): Promise<Result<ReadOutcome>>;
  write(at: CheckedFile, body: ReadableStream<Uint8Array>, options: StorageWriteOptions): Promise<Result<StoredWrite>>;
  remove(at: CheckedFile): Promise<Result<null>>;
  /** `at` names the folder as a root would (checked as `childRoot`); never the cap's root itself. */
  makeDir(at: CheckedRoot): Promise<Result<null>>;
  removeDir(at: CheckedRoot): Promise<Result<null>>;
  stat(at: CheckedEntry): Promise<Result<Stat>>;
  list(at: CheckedDir, options: StorageListOptions): Promise<Result<StorageListPage>>;
  /** Both ends lie under the same cap root. */
  move(from: CheckedFile, to: CheckedFile, overwrite: boolean): Promise<Result<null>>;
  /** Checks (and, for `create`, makes) a folder that a new cap will be rooted at. */
  prepareRoot(root: CheckedRoot, options: { create: boolean }): Promise<Result<null>>;
  /** A kept version's bytes (`versionRedacted` when there are none); names only from the journal. */
  readVersion(blob: string): Promise<Result<VersionBytes>>;
  /** Destroys a kept version's bytes; nothing there is success. */
  dropVersion(blob: string): Promise<Result<null>>;
}

export const DEFAULT_CONTENT_TYPE = "application/octet-stream";
