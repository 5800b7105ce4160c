/**
 * The wire protocol between {@link DiskStorage} (inside workerd) and the Node
 * disk host, carried over the `DISK` service binding. Both sides import this
 * module, so it holds only types and pure encode/decode functions.
 *
 * Request: `POST http://capvault-disk/<op>` whose body is a frame: a 4-byte
 * big-endian length N, N bytes of UTF-8 JSON (a {@link DiskCall}), then, for
 * `write` only, exactly `length` bytes of file content, streamed.
 * Why a frame and not a header: a root, two paths and a content type can
 * together outgrow the 16 KiB header limit of Miniflare's loopback server.
 *
 * Response: always 200. Either a JSON `Result` (see {@link DiskAnswers}), or,
 * for a read that returns bytes, those bytes as the body with
 * {@link READ_META_HEADER} holding `encodeURIComponent(JSON {meta, range})`;
 * for a `readVersion` that returns bytes, with {@link VERSION_SIZE_HEADER}
 * holding their length.
 */

import { isErrorCode } from "../shared/error-codes.ts";
import type { ByteRange } from "../shared/http-conditions.ts";
import type { Result } from "../shared/result.ts";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import type { Stat } from "../shared/wire-types.ts";
import type { FileMeta, ReadOutcome, StorageListPage, StoredWrite } from "./storage-adapter.ts";
import { isBlobName } from "./version-blobs.ts";

/** Root levels are sent as the cap holds them (`""` or `a/b/`); paths as parsed segments. */
export type DiskCall =
  | { op: "read"; root: string[]; path: string[]; range: string | null; ifNoneMatch: string | null }
  | {
      op: "write";
      root: string[];
      path: string[];
      length: number;
      contentType: string;
      ifMatch: string | null;
      ifNoneMatch: string | null;
      /** Also keep the bytes as this version blob (storage-adapters/version-blobs.ts), or none. */
      keepAs?: string | null;
    }
  | { op: "readVersion"; root: []; blob: string }
  | { op: "dropVersion"; root: []; blob: string }
  | { op: "remove"; root: string[]; path: string[] }
  | { op: "makeDir"; root: string[]; path: string[] }
  | { op: "removeDir"; root: string[]; path: string[] }
  | { op: "stat"; root: string[]; path: string[] }
  | { op: "list"; root: string[]; path: string[]; after: string | null; limit: number; depth: number }
  | { op: "move"; root: string[]; from: string[]; to: string[]; overwrite: boolean }
  | { op: "prepareRoot"; root: string[]; create: boolean };

export type DiskOp = DiskCall["op"];

/** What each op answers as JSON. A read that returns bytes answers with a body instead. */
export interface DiskAnswers {
  read: Exclude<ReadOutcome, { status: "body" }>;
  write: StoredWrite;
  readVersion: never;
  dropVersion: null;
  remove: null;
  makeDir: null;
  removeDir: null;
  stat: Stat;
  list: StorageListPage;
  move: null;
  prepareRoot: null;
}

/** Carries the byte length of a version blob's body. */
export const VERSION_SIZE_HEADER = "capvault-disk-version-size";
/** Carries `{ meta, range }` of a read whose body is the file's bytes. */
export const READ_META_HEADER = "capvault-disk-read";
/**
 * Carries the secret the launcher shares with the worker. The service binding
 * travels over Miniflare's loopback HTTP server, which any local process can
 * reach; without the secret a caller could skip every cap check.
 */
export const DISK_SECRET_HEADER = "capvault-disk-secret";
/** The JSON part of a frame may not be longer; it holds at most a few KiB of paths. */
export const MAX_CALL_BYTES = 64 * 1024;

export interface DiskReadMeta {
  meta: FileMeta;
  range: ByteRange | null;
}

const encoder = new TextEncoder();

/** The frame's head: length prefix plus JSON. For `write`, the content follows it. */
export function encodeCallHead(call: DiskCall): Uint8Array {
  const json = encoder.encode(JSON.stringify(call));
  const head = new Uint8Array(4 + json.length);
  new DataView(head.buffer).setUint32(0, json.length);
  head.set(json, 4);
  return head;
}

/** The call JSON at the head of `buffered`, once it has all arrived: its text and where the rest begins. */
function frameHead(buffered: Uint8Array): { json: string; end: number } | "malformed" | "short" {
  if (buffered.length < 4) return "short";
  const jsonLength = new DataView(buffered.buffer, buffered.byteOffset, 4).getUint32(0);
  if (jsonLength > MAX_CALL_BYTES) return "malformed";
  if (buffered.length < 4 + jsonLength) return "short";
  const json = decodeUtf8Strict(buffered.subarray(4, 4 + jsonLength));
  return json === null ? "malformed" : { json, end: 4 + jsonLength };
}

/**
 * A framed body that arrived whole (a small call over the disk host's
 * socket): its call JSON and the rest, no stream built. `null` when the
 * frame is malformed or cut short.
 */
export function splitWholeFrame(body: Uint8Array): { json: string; rest: Uint8Array } | null {
  const head = frameHead(body);
  return typeof head === "string" ? null : { json: head.json, rest: body.subarray(head.end) };
}

/**
 * Splits a framed request body into its call JSON and the rest (the content
 * of a write), without reading more of the content than arrived with the head.
 * `null` when the frame is malformed.
 *
 * @example
 * const framed = await splitFrame(request.body);
 * if (framed) handle(JSON.parse(framed.json), framed.rest);
 */
export async function splitFrame(
  body: ReadableStream<Uint8Array>,
): Promise<{ json: string; rest: ReadableStream<Uint8Array> } | null> {
  const reader = body.getReader();
  let buffered = new Uint8Array(0);
  for (;;) {
    const head = frameHead(buffered);
    if (head === "malformed") break;
    if (head !== "short") {
      let leftover: Uint8Array | null = buffered.subarray(head.end);
      const rest = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (leftover !== null) {
            const first = leftover;
            leftover = null;
            if (first.length > 0) return controller.enqueue(first);
          }
          const { value, done } = await reader.read();
          if (done) controller.close();
          else controller.enqueue(value);
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return { json: head.json, rest };
    }
    const { value, done } = await reader.read();
    if (done) break;
    const grown = new Uint8Array(buffered.length + value.length);
    grown.set(buffered);
    grown.set(value, buffered.length);
    buffered = grown;
  }
  // Read the rest rather than cancel: see `drain` in disk-host/atomic-write.ts.
  try {
    while (!(await reader.read()).done);
  } catch {
    // the sender gave up
  }
  return null;
}

/**
 * Checks the shape of a decoded call (the host's side of the trust boundary;
 * path contents are judged again by the host with the shared path parser).
 */
export function decodeCall(json: string): DiskCall | null {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const v = value as Record<string, unknown>;
  if (!isStringArray(v.root)) return null;
  switch (v.op) {
    case "read":
      return isStringArray(v.path) && isNullableString(v.range) && isNullableString(v.ifNoneMatch)
        ? (v as DiskCall)
        : null;
    case "write":
      return isStringArray(v.path) &&
        Number.isSafeInteger(v.length) &&
        (v.length as number) >= 0 &&
        typeof v.contentType === "string" &&
        isNullableString(v.ifMatch) &&
        isNullableString(v.ifNoneMatch) &&
        (v.keepAs === undefined || v.keepAs === null || isBlobName(v.keepAs))
        ? (v as DiskCall)
        : null;
    case "readVersion":
    case "dropVersion":
      return v.root.length === 0 && isBlobName(v.blob) ? (v as DiskCall) : null;
    case "remove":
    case "makeDir":
    case "removeDir":
    case "stat":
      return isStringArray(v.path) ? (v as DiskCall) : null;
    case "list":
      return isStringArray(v.path) &&
        isNullableString(v.after) &&
        Number.isSafeInteger(v.limit) &&
        (v.limit as number) >= 1 &&
        Number.isSafeInteger(v.depth) &&
        (v.depth as number) >= 0
        ? (v as DiskCall)
        : null;
    case "move":
      return isStringArray(v.from) && isStringArray(v.to) && typeof v.overwrite === "boolean" ? (v as DiskCall) : null;
    case "prepareRoot":
      return typeof v.create === "boolean" ? (v as DiskCall) : null;
    default:
      return null;
  }
}

export function encodeReadMeta(value: DiskReadMeta): string {
  return encodeURIComponent(JSON.stringify(value));
}

export function decodeReadMeta(header: string): DiskReadMeta | null {
  try {
    const value = JSON.parse(decodeURIComponent(header)) as DiskReadMeta;
    const m = value?.meta;
    if (!m || typeof m.size !== "number" || typeof m.etag !== "string" || typeof m.modified !== "string") return null;
    if (typeof m.contentType !== "string") return null;
    const r = value.range;
    if (r !== null && (typeof r?.start !== "number" || typeof r.end !== "number")) return null;
    return value;
  } catch {
    return null;
  }
}

/** Accepts a JSON body as a `Result` only if a failure carries a known code. */
export function decodeResult<T>(value: unknown): Result<T> | null {
  if (typeof value !== "object" || value === null) return null;
  const v = value as { ok?: unknown; value?: unknown; error?: { code?: unknown; message?: unknown } };
  if (v.ok === true && "value" in v) return v as Result<T>;
  if (v.ok === false && isErrorCode(v.error?.code) && typeof v.error?.message === "string") return v as Result<T>;
  return null;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

function isNullableString(value: unknown): value is string | null {
  return value === null || typeof value === "string";
}
