/**
 * `source` re-read in chunks the runtime fills natively (`readAtLeast` on a
 * BYOB reader): at least `min` bytes each (except the last), at most `max`,
 * with `beforeRead` awaited before each read (a turn of the runtime, for a
 * paced copy). JavaScript then sees one chunk where the source had dozens of
 * small ones. A stream that cannot be read so (one built in JavaScript, not a
 * byte stream) is returned as it is. Bytes, order and errors are unchanged:
 * a source that errors errors this stream, and cancelling this stream cancels
 * the source. Used by durable-objects/large-chunks.ts (uploads) and the R2
 * adapter's paced copy.
 *
 * `expected`, when the source's length is known (an upload's Content-Length),
 * sizes each buffer to what is left rather than `max`: a 1 KiB write then
 * allocates 1 KiB, not 256 KiB (profiled: the big buffer was 12% of the
 * vault isolate's CPU per 1 KiB R2 write, its allocation and the collector's
 * work after it). A source that turns out longer still reads whole: past the
 * expected length the buffers are `min` again, after a one-byte probe.
 *
 * A consumer done with a chunk's bytes may hand it back ({@link recycleChunk})
 * and a later read of the same stream fills it again. Each chunk is a fresh
 * ArrayBuffer otherwise, garbage once written: measured on a 256 MiB R2
 * upload, the vault's isolate then held 30-40 MiB of dead chunks between two
 * collections (V8 collects on about 64 MiB of such external memory), most of
 * the vault's RSS growth beyond a floor that pays the same passes.
 */
export function nativeChunks(
  source: ReadableStream<Uint8Array>,
  size: { min: number; max: number },
  beforeRead?: () => Promise<void>,
  expected?: number,
): ReadableStream<Uint8Array> {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = source.getReader({ mode: "byob" });
  } catch {
    return source;
  }
  let seen = 0;
  const spares: ArrayBuffer[] = [];
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      await beforeRead?.();
      // A body cut off mid-upload (the client gone) rejects the read. That error
      // is handed on explicitly: a pull that rejects would error this stream
      // too, but workerd also reports it as an unhandled rejection.
      // A length that is not a whole number of bytes is no hint (no caller passes one: they come from byte counts).
      const left = expected === undefined || !Number.isSafeInteger(expected) ? size.max : expected - seen;
      // Exactly what is left; at the expected end a one-byte probe finds the end (or more bytes than declared).
      const room = left > 0 ? Math.min(size.max, left) : left === 0 ? 1 : size.min;
      const spare = spares.pop();
      const into = spare && spare.byteLength >= room ? new Uint8Array(spare, 0, room) : new Uint8Array(room);
      const read = await reader.readAtLeast(Math.min(size.min, room), into).then(
        (result) => result,
        (error: unknown) => {
          controller.error(error);
          return null;
        },
      );
      if (!read) return;
      if (read.value && read.value.byteLength > 0) {
        seen += read.value.byteLength;
        handedOut.set(read.value.buffer, spares);
        controller.enqueue(read.value);
      }
      if (read.done) controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** Spares a stream keeps for its next reads; more handed back are left to the collector. */
const SPARES_MAX = 8;

/** The spares list of the stream each chunk in use came from, by the chunk's buffer. */
const handedOut = new WeakMap<ArrayBufferLike, ArrayBuffer[]>();

/**
 * Hands a chunk {@link nativeChunks} made back to the stream it came from,
 * whose next read may overwrite its bytes. Call it only once nothing will
 * read the chunk again: its writes resolved (a native sink has then copied
 * it) and no other reader holds it. Any other chunk is left as it is;
 * a chunk handed back twice counts once. A spare is only ever refilled by
 * the stream (one upload) it came from, never another's, and the read that
 * refills it detaches the buffer: a view kept by mistake reads as empty,
 * not as the next chunk's bytes.
 */
export function recycleChunk(chunk: Uint8Array): void {
  const spares = handedOut.get(chunk.buffer);
  if (!spares) return;
  handedOut.delete(chunk.buffer);
  if (spares.length < SPARES_MAX && chunk.buffer instanceof ArrayBuffer) spares.push(chunk.buffer);
}
