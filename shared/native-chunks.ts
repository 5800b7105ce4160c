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
 */
export function nativeChunks(
  source: ReadableStream<Uint8Array>,
  size: { min: number; max: number },
  beforeRead?: () => Promise<void>,
): ReadableStream<Uint8Array> {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = source.getReader({ mode: "byob" });
  } catch {
    return source;
  }
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      await beforeRead?.();
      // A body cut off mid-upload (the client gone) rejects the read. That error
      // is handed on explicitly: a pull that rejects would error this stream
      // too, but workerd also reports it as an unhandled rejection.
      const read = await reader.readAtLeast(size.min, new Uint8Array(size.max)).then(
        (result) => result,
        (error: unknown) => {
          controller.error(error);
          return null;
        },
      );
      if (!read) return;
      if (read.value && read.value.byteLength > 0) controller.enqueue(read.value);
      if (read.done) controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
