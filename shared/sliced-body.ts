import { yieldTurn } from "./yield-turn.ts";

/** Bytes handed on per turn: about what an HTTP upload delivers between two reads of its socket. */
export const SLICE_BYTES = 64 * 1024;

/**
 * `bytes` as a byte stream of {@link SLICE_BYTES} slices, each handed on
 * only after `pause` (a turn of the runtime, see yield-turn.ts). A body
 * built whole in memory (MCP's write_file, an edit's new text) went to
 * storage as one buffer: the cap's object and the local R2 simulator then
 * moved all 2 MiB with an event always ready, and a read on another cap
 * waited ~150 ms for it. Sliced, the write goes at the pace of an HTTP
 * upload, which the same reader does not notice. Each byte is copied once;
 * the work stays linear in the length.
 */
export function slicedBody(
  bytes: Uint8Array,
  pause: () => Promise<void> = yieldTurn,
  slice = SLICE_BYTES,
): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    type: "bytes",
    async pull(controller) {
      if (at >= bytes.byteLength) return controller.close();
      if (at > 0) await pause();
      // A copy of one slice: a byte stream detaches what it is given, and `bytes` may be the caller's.
      controller.enqueue(bytes.slice(at, at + slice));
      at += slice;
      if (at >= bytes.byteLength) controller.close();
    },
  });
}

/**
 * `source` unchanged, but after every {@link SLICE_BYTES} it passes, a turn
 * of the runtime (`pause`) before the next chunk: for a stream whose both
 * ends are in this process (a copy from storage to storage), which would
 * otherwise move all its bytes with an event always ready.
 */
export function paced(
  source: ReadableStream<Uint8Array>,
  pause: () => Promise<void> = yieldTurn,
  slice = SLICE_BYTES,
): ReadableStream<Uint8Array> {
  let sinceTurn = 0;
  return source.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        if (sinceTurn >= slice) {
          sinceTurn = 0;
          await pause();
        }
        sinceTurn += chunk.byteLength;
        controller.enqueue(chunk);
      },
    }),
  );
}
