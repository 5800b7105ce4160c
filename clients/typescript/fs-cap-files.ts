import type { ListEntry, ListPage, WriteResult } from "../../shared/wire-types.ts";
import { CapError } from "./cap-error.ts";
import { etagHeader, rangeHeader, readMeta } from "./response-meta.ts";
import type { ReadOptions, ReadStreamResult, WriteData, WriteOptions } from "./types.ts";
import type { VaultTransport } from "./vault-transport.ts";
import { prepareWriteBody } from "./write-body.ts";

/** Paths are data: no trimming, normalising or encoding here; URLSearchParams encodes once. */
export function pathParam(path: string): string {
  if (typeof path !== "string") throw new TypeError("path must be a string");
  return path;
}

export function emptyStream(): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (controller) => controller.close() });
}

/** `GET /file` as a stream, or `notModified` for a 304 (its body cancelled). */
export async function openFile(
  http: VaultTransport,
  base: string,
  path: string,
  options: ReadOptions,
): Promise<ReadStreamResult> {
  const response = await http.send({
    method: "GET",
    url: `${base}/file`,
    query: { path: pathParam(path) },
    headers: {
      range: rangeHeader(options.range),
      "if-none-match": etagHeader(options.ifNoneMatch),
      // Files arrive as stored: workerd would otherwise gzip text types on the fly and drop
      // Content-Length, which callers need for sizes and progress. (Browsers ignore this header.)
      "accept-encoding": "identity",
    },
    signal: options.signal,
    expect: [200, 206, 304],
  });
  const meta = readMeta(response);
  if (response.status === 304) {
    await response.body?.cancel();
    return { notModified: true, body: null, meta: { etag: meta.etag } };
  }
  return { notModified: false, body: response.body ?? emptyStream(), meta };
}

/** `PUT /file`: creates or replaces the file. */
export async function putFile(
  http: VaultTransport,
  base: string,
  path: string,
  data: WriteData,
  options: WriteOptions,
): Promise<WriteResult> {
  const prepared = prepareWriteBody(data, options.length);
  const request = {
    method: "PUT" as const,
    url: `${base}/file`,
    query: { path: pathParam(path) },
    headers: {
      "content-type": options.contentType ?? prepared.impliedContentType,
      "content-length": prepared.contentLength,
      "if-match": etagHeader(options.ifMatch),
      "if-none-match": etagHeader(options.ifNoneMatch),
    },
    body: prepared.body,
    signal: options.signal,
    expect: [200, 201],
  };
  const response = await http.send(prepared.duplex ? { ...request, duplex: prepared.duplex } : request);
  const result = await http.json<{ size: number; etag: string; sha256: string }>(response);
  return { created: response.status === 201, size: result.size, etag: result.etag, sha256: result.sha256 };
}

/** A call on one path that answers nothing worth reading (delete, make or remove a folder). */
export async function pathCall(
  http: VaultTransport,
  method: "PUT" | "DELETE",
  url: string,
  path: string,
  expect: number[],
): Promise<void> {
  const response = await http.send({ method, url, query: { path: pathParam(path) }, expect });
  await response.body?.cancel();
}

/** Every entry of a listing, page after page. */
export async function* everyEntry(
  listPage: (cursor: string | null) => Promise<ListPage>,
): AsyncGenerator<ListEntry, void, undefined> {
  let cursor: string | null = null;
  do {
    const page: ListPage = await listPage(cursor);
    yield* page.entries;
    // A server that hands back the cursor it was given would loop forever.
    if (page.cursor !== null && page.cursor === cursor) {
      throw new CapError("unavailable", 200, "the vault repeated a listing cursor");
    }
    cursor = page.cursor;
  } while (cursor !== null);
}
