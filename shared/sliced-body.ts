import { yieldTurn } from "./yield-turn.ts";

/** Bytes handed on per turn: about what an HTTP upload delivers between two reads of its socket. */
export const SLICE_BYTES = 64 * 1024;

/**
 * `bytes` as a byte stream of {@link SLICE_BYTES} slices, each handed on
 * only after `pause` (a turn of the runtime, see yield-turn.ts). A body
 * built whole in memory (MCP's write_file, an edit's new text) was all
 * there at once, and the cap's object and the local R2 simulator moved it
 * to storage back to back: a read on another cap waited ~150 ms. An HTTP
 * upload of the same size arrives at the network's pace and the same reader
 * barely notices it. Measured here, the turns are what help: slices handed
 * on without them delayed the reader more, not less. Each byte is copied
 * once; the work stays linear in the length.
 */
export function slicedBody(
  bytes: Uint8Array,
  pause: () => Promise<void> = yieldTurn,
  slice = SLICE_BYTES,
): ReadableStream<Uint8Array> {
  let at = 0;
  // A plain stream of views, not a byte stream: workerd hands a byte stream built here on in 4 KiB reads.
  // Nothing is sliced ahead of a read (high-water mark 0): each pause falls between a read and the next.
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (at >= bytes.byteLength) return controller.close();
        if (at > 0) await pause();
        controller.enqueue(bytes.subarray(at, at + slice));
        at += slice;
        if (at >= bytes.byteLength) controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}
