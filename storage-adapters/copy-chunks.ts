import { recycleChunk } from "../shared/native-chunks.ts";

/**
 * Copies `source` into every one of `sinks`, a chunk at a time: each chunk
 * is written to all of them at once and, when every write has resolved
 * (native sinks such as FixedLengthStream and DigestStream have then taken
 * its bytes), handed back to the stream it came from for its next read
 * (see recycleChunk). A pipe cannot do that: it never says when a chunk is
 * done with, so every chunk of an upload was a new buffer left to the
 * collector.
 *
 * Errors travel as through a pipe: a source that errors aborts every sink
 * with its error, a sink that fails cancels the source and aborts the
 * others, and `signal` aborting does both at once, even while a read or
 * write waits. Resolves `true` once every byte reached every sink and each
 * closed, `false` otherwise; never rejects. `onChunk` sees each chunk before
 * it is written.
 */
export async function copyChunks(
  source: ReadableStream<Uint8Array>,
  sinks: WritableStream<Uint8Array>[],
  options: { signal?: AbortSignal | undefined; onChunk?: (chunk: Uint8Array) => void } = {},
): Promise<boolean> {
  const reader = source.getReader();
  const writers = sinks.map((sink) => sink.getWriter());
  // A failed copy rejects these too; the answer says so, and workerd would report them as unhandled.
  for (const settled of [reader.closed, ...writers.map((writer) => writer.closed)]) settled.catch(() => undefined);
  let stopped = false;
  const stop = (reason: unknown) => {
    if (stopped) return;
    stopped = true;
    reader.cancel(reason).catch(() => undefined);
    for (const writer of writers) writer.abort(reason).catch(() => undefined);
  };
  const { signal, onChunk } = options;
  const onAbort = () => stop(signal?.reason);
  if (signal?.aborted) onAbort();
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    while (!stopped) {
      const next = await reader.read();
      if (next.done) break;
      onChunk?.(next.value);
      await Promise.all(writers.map((writer) => writer.write(next.value)));
      recycleChunk(next.value);
    }
    if (stopped) return false;
    await Promise.all(writers.map((writer) => writer.close()));
    return true;
  } catch (error) {
    stop(error);
    return false;
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}
