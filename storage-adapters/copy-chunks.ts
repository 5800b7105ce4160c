import { recycleChunk } from "../shared/native-chunks.ts";

/** How a copy may be stopped from outside (see copyChunks). */
export interface CopyOptions {
  /** Stops the copy at any point, even while a write waits on a sink nobody reads any more. */
  signal?: AbortSignal | undefined;
  /**
   * Cuts the copy while the source is still being read; once the source has
   * ended cleanly the copy finishes. A sink that commits on its declared
   * length (a FixedLengthStream into an R2 put stores what reached its length
   * even when aborted after) then never sees a cut after its last byte.
   */
  cut?: AbortSignal | undefined;
  onChunk?: (chunk: Uint8Array) => void;
}

/**
 * Copies `source` into every one of `sinks`, a chunk at a time: each chunk
 * is written to all of them at once and, when every write has resolved
 * (native sinks such as FixedLengthStream and DigestStream have then taken
 * its bytes), handed back to the stream it came from for its next read
 * (see recycleChunk). A pipe cannot do that: it never says when a chunk is
 * done with, so every chunk of an upload was a new buffer left to the
 * collector.
 *
 * **No sink gets the source's last chunk before the source has ended
 * cleanly**: each chunk is written once the next read has answered, so a
 * source that fails, even after its last byte, leaves every sink short of
 * it. A sink that commits once it has every declared byte (an R2 put through
 * a FixedLengthStream, the disk host) therefore stores nothing of a body
 * that did not end cleanly, whatever the runtime does with a stream aborted
 * after its length was reached.
 *
 * Errors travel as through a pipe: a source that errors aborts every sink
 * with its error, a sink that fails cancels the source and aborts the
 * others, and `signal` (or `cut`, before the source's end) aborting does
 * both at once, even while a read or write waits. Resolves `true` once every
 * byte reached every sink and each closed, `false` otherwise; never rejects.
 * `onChunk` sees each chunk as it is read.
 */
export async function copyChunks(
  source: ReadableStream<Uint8Array>,
  sinks: WritableStream<Uint8Array>[],
  options: CopyOptions = {},
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
  const { signal, cut, onChunk } = options;
  const onAbort = () => stop(signal?.reason);
  const onCut = () => stop(cut?.reason);
  if (signal?.aborted) onAbort();
  if (cut?.aborted) onCut();
  signal?.addEventListener("abort", onAbort, { once: true });
  cut?.addEventListener("abort", onCut, { once: true });
  const write = async (chunk: Uint8Array) => {
    await Promise.all(writers.map((writer) => writer.write(chunk)));
    recycleChunk(chunk);
  };
  try {
    let held: Uint8Array | null = null;
    while (!stopped) {
      const next = await reader.read();
      if (next.done) break;
      onChunk?.(next.value);
      if (held) await write(held);
      held = next.value;
    }
    if (stopped) return false;
    // The source ended cleanly: its last bytes go, and a cut no longer applies.
    cut?.removeEventListener("abort", onCut);
    if (held) await write(held);
    await Promise.all(writers.map((writer) => writer.close()));
    return true;
  } catch (error) {
    stop(error);
    return false;
  } finally {
    signal?.removeEventListener("abort", onAbort);
    cut?.removeEventListener("abort", onCut);
  }
}
