import { CapError } from "./cap-error.ts";
import type { WriteData } from "./types.ts";

export interface PreparedBody {
  body: BodyInit;
  /** Set only for streams: fetch computes it itself for every other body type. */
  contentLength?: string;
  duplex?: "half";
  /** A content type implied by the data (Blob type, text for strings), used when the caller gave none. */
  impliedContentType?: string;
}

/**
 * Turns the accepted write inputs into a fetch body whose length is known up
 * front: the vault requires `Content-Length` so that it can stream a body to
 * storage without holding it, and refuse an oversize one before reading it.
 */
export function prepareWriteBody(data: WriteData, length: number | undefined): PreparedBody {
  if (typeof data === "string") {
    return { body: new TextEncoder().encode(data), impliedContentType: "text/plain; charset=utf-8" };
  }
  if (data instanceof Uint8Array) return { body: data };
  if (data instanceof ArrayBuffer) return { body: new Uint8Array(data) };
  if (typeof Blob !== "undefined" && data instanceof Blob) {
    return data.type ? { body: data, impliedContentType: data.type } : { body: data };
  }
  if (isReadableStream(data)) {
    if (length === undefined || !Number.isSafeInteger(length) || length < 0) {
      throw new CapError(
        "length_required",
        0,
        "a ReadableStream body needs options.length (its exact size in bytes): the vault requires Content-Length",
      );
    }
    return { body: fixedLength(data, length), contentLength: String(length), duplex: "half" };
  }
  throw new TypeError("write data must be a string, Uint8Array, ArrayBuffer, Blob or ReadableStream");
}

function isReadableStream(value: unknown): value is ReadableStream<Uint8Array> {
  return typeof value === "object" && value !== null && typeof (value as ReadableStream).getReader === "function";
}

/**
 * Node's fetch sends the `Content-Length` we set (and fails if the stream
 * disagrees). Workers ignore the header on a plain stream and send it chunked,
 * unless the stream is a `FixedLengthStream`, so use one where it exists.
 */
function fixedLength(stream: ReadableStream<Uint8Array>, length: number): ReadableStream<Uint8Array> {
  const FixedLengthStream = (
    globalThis as { FixedLengthStream?: new (n: number) => TransformStream<Uint8Array, Uint8Array> }
  ).FixedLengthStream;
  return FixedLengthStream ? stream.pipeThrough(new FixedLengthStream(length)) : stream;
}
