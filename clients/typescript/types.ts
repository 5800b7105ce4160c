/**
 * The SDK's own types: options it takes and what it reads from response
 * headers. The JSON shapes the vault answers with are in shared/wire-types.ts;
 * index.ts exports both.
 */
import type { ErrorCode } from "../../shared/error-codes.ts";
import type { HolderJwk } from "../../shared/holder-key.ts";
import type { Right } from "../../shared/rights.ts";
import type { Backend } from "../../shared/wire-types.ts";
import type { HolderKey } from "./holder.ts";

/**
 * A wire error code. Known codes autocomplete; an unknown code from a newer
 * server is passed through unchanged rather than being guessed at.
 */
export type CapErrorCode = ErrorCode | (string & {});

/** The `fetch` the SDK calls. Any WHATWG-compatible fetch works (Node, Workers, browsers, test fakes). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** Replaces `globalThis.fetch`, e.g. a Worker service binding's `fetch` or a test double. */
  fetch?: FetchLike;
}

export interface ListPageOptions {
  cursor?: string | null;
  /** 1–1000; the server's default is 1000. */
  limit?: number;
  /**
   * 1 (the default): direct children. 0: every file below, each named by its
   * path relative to the folder (`a/b.txt`). N: files down to N levels, and
   * each folder deeper than that once, as a `dir` entry. A page may hold
   * fewer entries than `limit` (even none) and still have a cursor.
   */
  depth?: number;
}

/** An inclusive byte range, as in HTTP: `{ start: 0, end: 99 }` is the first 100 bytes. */
export interface ByteRangeRequest {
  start: number;
  /** Inclusive. Omit to read to the end of the file. */
  end?: number;
}

export interface ReadOptions {
  range?: ByteRangeRequest;
  /** An etag (quoted or not) or `*`: answer "not modified" instead of the bytes when it matches. */
  ifNoneMatch?: string;
  signal?: AbortSignal;
}

/** What the response headers say about a file that was read. */
export interface ReadMeta {
  /** Hex MD5 of the whole file, unquoted (as in JSON results). */
  etag: string;
  /** Bytes in this response's body (the range length for a ranged read). */
  length: number | null;
  contentType: string | null;
  /** ISO 8601, from `Last-Modified`. */
  modified: string | null;
  /** Present for a ranged read (HTTP 206): the inclusive range served and the file's full size. */
  range: { start: number; end: number; size: number } | null;
}

export type ReadStreamResult =
  | { notModified: false; body: ReadableStream<Uint8Array>; meta: ReadMeta }
  | { notModified: true; body: null; meta: Pick<ReadMeta, "etag"> };

export type WriteData = string | Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array>;

export interface WriteOptions {
  /** Stored with the file. Defaults to the Blob's type, `text/plain; charset=utf-8` for strings, else the server's default. */
  contentType?: string;
  /** Write only if the current etag matches (optimistic concurrency). */
  ifMatch?: string;
  /** `"*"`: write only if nothing exists at the path. */
  ifNoneMatch?: string;
  /** Exact byte length; required for a `ReadableStream` body because the vault requires `Content-Length`. */
  length?: number;
  signal?: AbortSignal;
}

export interface MoveOptions {
  /** Replace an existing destination file; otherwise an existing destination is a `conflict`. */
  overwrite?: boolean;
}

export interface SubdirOptions {
  /** Relative to this cap; `""` keeps the same root (pure attenuation, e.g. read-only). */
  path: string;
  /** Must be a subset of this cap's rights; defaults to all of them. */
  rights?: Right[];
  ttlSeconds?: number;
  label?: string;
  /** Most bytes the subtree may hold, superseded versions kept included (never looser than the parent's). */
  maxBytes?: number;
  /** Most live files the subtree may hold (never looser than the parent's). */
  maxFiles?: number;
  /**
   * `"all"`: the child sees the version history this cap sees. Left out, it
   * sees only versions written after it was minted.
   */
  history?: "all";
  /**
   * Binds the child to a holder key (issue 20): a public JWK (sharing to a
   * named holder: the child URL is useless without that key) or a
   * {@link HolderKey} (the returned cap then signs with it). A child of a bound
   * cap must be bound.
   */
  holder?: HolderJwk | HolderKey;
}

/** Options of an {@link FsCap}: the client options, and the key of a holder-bound cap. */
export interface CapOptions extends ClientOptions {
  /** Signs every request with a DPoP proof by this key; needed for a cap bound to it. */
  holder?: HolderKey;
}

export interface RevokeResult {
  /**
   * `true` when every descendant was revoked before the response (HTTP 204).
   * `false` when the vault accepted the revocation but is still finishing the
   * cascade in the background (HTTP 202); `detail` is the server's account.
   */
  complete: boolean;
  detail?: unknown;
}

export interface MintRootOptions {
  backend: Backend;
  /** The root prefix (R2) or folder under the disk base (disk). `""` is allowed for disk. */
  prefix: string;
  rights?: Right[];
  label?: string;
  ttlSeconds?: number;
  /** Versions kept per path (1–10,000; default 100); every cap over the root shares it. */
  keepVersions?: number;
  /** Days a version is kept (1–3,650; default 30). */
  keepDays?: number;
  /** Most bytes the root may hold, superseded versions kept included; writes past it are `quota_exceeded`. */
  maxBytes?: number;
  /** Most live files the root may hold. */
  maxFiles?: number;
  /** Binds the root to a holder key, as {@link SubdirOptions.holder}. */
  holder?: HolderJwk | HolderKey;
}
