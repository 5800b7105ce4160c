import type { Readable, Writable } from "node:stream";
import { writeOut } from "../cli-io.ts";

/**
 * Copies a web stream to a Node writable with back-pressure. A reader that
 * went away (`capvault cat big | head`) is not an error: the copy stops, the
 * download is cancelled, and the command still succeeds, like `cat` does.
 */
export async function pumpToWritable(body: ReadableStream<Uint8Array>, out: Writable): Promise<void> {
  let closedByReader = false;
  const onError = (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE" || error.code === "ERR_STREAM_DESTROYED") closedByReader = true;
  };
  out.on("error", onError);
  const reader = body.getReader();
  try {
    for (;;) {
      if (closedByReader) {
        await reader.cancel();
        return;
      }
      const { done, value } = await reader.read();
      if (done) return;
      try {
        await writeOut(out, value);
      } catch (error) {
        if (!closedByReader && (error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
        closedByReader = true;
      }
    }
  } finally {
    out.off("error", onError);
    reader.releaseLock();
  }
}

/** Reads a whole Node stream (stdin from a pipe, whose size is unknown until it ends). */
export async function collectBytes(stream: Readable): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === "string" ? new TextEncoder().encode(chunk) : (chunk as Uint8Array);
    chunks.push(bytes);
    size += bytes.byteLength;
  }
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return all;
}
