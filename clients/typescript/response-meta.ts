import { bareEtag } from "../../shared/http-conditions.ts";
import type { ByteRangeRequest, ReadMeta } from "./types.ts";

/**
 * Puts an etag into header form. Callers may pass the unquoted etag from a
 * JSON result, a quoted one from a header, or `*`.
 */
export function etagHeader(etag: string | undefined): string | undefined {
  if (etag === undefined) return undefined;
  const t = etag.trim();
  if (t === "*" || t.startsWith('"') || t.startsWith("W/")) return t;
  return `"${t}"`;
}

export function rangeHeader(range: ByteRangeRequest | undefined): string | undefined {
  if (range === undefined) return undefined;
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || start < 0) throw new RangeError("range.start must be a non-negative integer");
  if (end !== undefined && (!Number.isSafeInteger(end) || end < start)) {
    throw new RangeError("range.end must be an integer no smaller than range.start (it is inclusive)");
  }
  return `bytes=${start}-${end ?? ""}`;
}

/** Reads a file response's headers into the SDK's unquoted, ISO-dated form. */
export function readMeta(response: Response): ReadMeta {
  const h = response.headers;
  const lengthHeader = h.get("content-length");
  const length = lengthHeader !== null && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : null;
  return {
    etag: bareEtag(h.get("etag") ?? ""),
    length,
    contentType: h.get("content-type"),
    modified: isoDate(h.get("last-modified")),
    range: response.status === 206 ? contentRange(h.get("content-range")) : null,
  };
}

function isoDate(httpDate: string | null): string | null {
  if (httpDate === null) return null;
  const time = Date.parse(httpDate);
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

function contentRange(header: string | null): ReadMeta["range"] {
  const match = header === null ? null : /^bytes (\d+)-(\d+)\/(\d+)$/.exec(header.trim());
  if (!match) return null;
  return { start: Number(match[1]), end: Number(match[2]), size: Number(match[3]) };
}
