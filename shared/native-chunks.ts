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
      const read = await reader.readAtLeast(Math.min(size.min, room), new Uint8Array(room)).then(
        (result) => result,
        (error: unknown) => {
          controller.error(error);
          return null;
        },
      );
      if (!read) return;
      if (read.value && read.value.byteLength > 0) {
        seen += read.value.byteLength;
        controller.enqueue(read.value);
      }
      if (read.done) controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
