/**
 * HTTP validators and byte ranges, decided the same way by every backend so
 * that R2 and disk answer a conditional or ranged request identically.
 */

/** An inclusive byte range within a file of known size. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Reads a `Range` header against a file size (RFC 9110 §14.1.2). Returns
 * `null` for "serve the whole file" (absent, malformed or multi-range, which
 * servers may ignore) and `"unsatisfiable"` for a well-formed range that
 * selects no byte.
 */
export function parseByteRange(header: string | null | undefined, size: number): ByteRange | null | "unsatisfiable" {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match) return null;
  const [, first, last] = match;
  if (first === "" && last === "") return null;
  if (first === "") {
    const suffix = Number(last);
    if (suffix === 0) return "unsatisfiable";
    return size === 0 ? "unsatisfiable" : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  const end = last === "" ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== "" && Number(last) < start) return null;
  if (start >= size) return "unsatisfiable";
  return { start, end };
}

/** Strips `W/` and quotes so `"abc"`, `W/"abc"` and `abc` all name etag `abc`. */
export function bareEtag(tag: string): string {
  const t = tag.trim().replace(/^W\//, "");
  return t.length >= 2 && t.startsWith('"') && t.endsWith('"') ? t.slice(1, -1) : t;
}

/** True when an `If-Match` / `If-None-Match` list names `etag` (or is `*`). */
export function etagListMatches(header: string, etag: string): boolean {
  return header.split(",").some((part) => part.trim() === "*" || bareEtag(part) === etag);
}

/** Preconditions on a write, as sent in `If-Match` / `If-None-Match`. */
export interface WritePreconditions {
  ifMatch?: string | undefined;
  ifNoneMatch?: string | undefined;
}

/** What a write's precondition is judged against: the etag, and the SHA-256 when storage knows it. */
export interface Validators {
  etag: string;
  /** Hex, lowercase; `null` for a file stored before hashes were kept (R2). */
  sha256: string | null;
}

const SHA256_TAG = /^sha256:/i;

/**
 * True when a list names the file: `*`, its etag, or `sha256:<hex>` (quotes
 * optional, hex in either case), so a client can compute its precondition
 * from bytes it holds. A file whose hash is unknown matches no `sha256:` tag.
 */
export function validatorListMatches(header: string, current: Validators): boolean {
  return header.split(",").some((part) => {
    const tag = bareEtag(part);
    if (part.trim() === "*") return true;
    if (!SHA256_TAG.test(tag)) return tag === current.etag;
    return current.sha256 !== null && tag.slice(7).toLowerCase() === current.sha256;
  });
}

/** True when a precondition names a `sha256:` tag that is not 64 hex digits: refused, never judged. */
export function malformedSha256Tag(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(",").some((part) => {
    const tag = bareEtag(part);
    return SHA256_TAG.test(tag) && !/^[0-9a-f]{64}$/i.test(tag.slice(7));
  });
}

/** Decides a write precondition against what is stored now (`null` when nothing exists). */
export function writeAllowed(pre: WritePreconditions, current: Validators | null): boolean {
  if (pre.ifMatch !== undefined && (current === null || !validatorListMatches(pre.ifMatch, current))) return false;
  if (pre.ifNoneMatch !== undefined && current !== null && validatorListMatches(pre.ifNoneMatch, current)) return false;
  return true;
}
