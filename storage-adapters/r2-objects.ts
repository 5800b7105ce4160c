import type { Validators } from "../shared/http-conditions.ts";
import type { ListEntry } from "../shared/wire-types.ts";
import { DEFAULT_CONTENT_TYPE, type FileMeta, type StorageWriteOptions } from "./storage-adapter.ts";

/** R2 deletes and lists move at most this many keys per call. */
export const R2_PAGE = 1000;

export function metaOf(object: R2Object): FileMeta {
  return {
    size: object.size,
    etag: object.etag,
    sha256: sha256Of(object),
    modified: object.uploaded.toISOString(),
    contentType: object.httpMetadata?.contentType ?? DEFAULT_CONTENT_TYPE,
  };
}

/** Where an object's SHA-256 is kept: custom metadata, which R2 lists, heads and copies with the object. */
export const SHA256_KEY = "sha256";
/** Listings carry each file's hash. */
export const WITH_HASH: ("customMetadata" | "httpMetadata")[] = ["customMetadata"];
/** The list options workerd honours; the pinned types predate `include`. */
export type ListOptions = R2ListOptions & { include?: typeof WITH_HASH };
/** The SHA-256 of no bytes. */
export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** The stored hash, trusted only in its own shape (keys written around the vault may carry anything). */
export function sha256Of(object: R2Object): string | null {
  const value = object.customMetadata?.[SHA256_KEY];
  return value !== undefined && /^[0-9a-f]{64}$/.test(value) ? value : null;
}

export function fileEntry(name: string, object: R2Object): ListEntry {
  return {
    name,
    type: "file",
    size: object.size,
    etag: object.etag,
    sha256: sha256Of(object),
    modified: object.uploaded.toISOString(),
  };
}

export function validatorsOf(object: R2Object | null): Validators | null {
  return object ? { etag: object.etag, sha256: sha256Of(object) } : null;
}

export function hex(buffer: ArrayBuffer): string {
  return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * A write's precondition as R2 re-checks it atomically, or nothing for an
 * unconditional write. The condition was decided before by the rule every
 * backend shares (writeAllowed); R2 must not re-judge the raw headers: it
 * compares If-Match strongly (`W/"x"` never matches), so it would refuse
 * writes the disk accepts. It re-checks only that the key is still the
 * version that was judged (`current`): the same decision, still atomic.
 */
export function onlyIfCurrent(options: StorageWriteOptions, current: R2Object | null): { onlyIf?: Headers } {
  if (options.ifMatch === undefined && options.ifNoneMatch === undefined) return {};
  return { onlyIf: new Headers(current ? { "if-match": `"${current.etag}"` } : { "if-none-match": "*" }) };
}
