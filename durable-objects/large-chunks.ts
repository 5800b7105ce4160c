import { nativeChunks } from "../shared/native-chunks.ts";

/** Chunks handed on are at least this large (except the last)... */
const MIN_CHUNK = 64 * 1024;
/** ...and at most this large: what one read may take, so also what the stream holds ahead. */
const MAX_CHUNK = 256 * 1024;

/**
 * `source` in chunks of 64–256 KiB instead of the few KiB an upload arrives
 * in. Every chunk of an upload passes through several JavaScript stream
 * stages in the cap's object (revocation cut, time bounds, length count);
 * at ~4 KiB per chunk that cost three times the CPU of the bare R2 put, all
 * on the runtime's one thread, delaying every other request in the
 * meantime. The runtime fills the buffer natively (`readAtLeast`), so
 * JavaScript sees one chunk where it saw about sixty.
 *
 * The upload's idle bound (30 s without a chunk) counts from the last
 * 64 KiB rather than the last byte: a sender slower than about 2 KiB/s is cut
 * at 30 s instead of when its pace bound (16 KiB/s after a minute) cuts it.
 * Both refuse it; no sender fast enough to finish is affected.
 *
 * A stream the runtime cannot read that way (one built in JavaScript, not a
 * byte stream) is returned as it is. Bytes, order and errors are unchanged:
 * a source that errors errors this stream, and cancelling this stream
 * cancels the source. `expected` (the declared length) sizes the buffers
 * to what is left (see nativeChunks).
 */
export function largeChunks(source: ReadableStream<Uint8Array>, expected?: number): ReadableStream<Uint8Array> {
  return nativeChunks(source, { min: MIN_CHUNK, max: MAX_CHUNK }, undefined, expected);
}
