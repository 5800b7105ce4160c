import type { CliIo } from "../cli-io.ts";
import { formatBytes } from "../human-format.ts";

/** Transfers at least this big get a progress bar (when stderr is a terminal). */
export const PROGRESS_THRESHOLD_BYTES = 4 * 1024 * 1024;
const REDRAW_INTERVAL_MS = 100;
const BAR_WIDTH = 24;

/**
 * One line of progress: `label [#####-----]  45%  12.0 MiB / 27.0 MiB`.
 * Pure, so it is tested without a terminal.
 */
export function renderProgress(label: string, done: number, total: number): string {
  const fraction = total > 0 ? Math.min(1, done / total) : 1;
  const filled = Math.round(fraction * BAR_WIDTH);
  const percent = `${Math.floor(fraction * 100)}%`.padStart(4);
  return `${label} [${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ${percent}  ${formatBytes(done)} / ${formatBytes(total)}`;
}

/**
 * A pass-through stream that draws progress on stderr, or `null` when no bar
 * is wanted: small transfers, unknown sizes, or stderr not a terminal (so
 * pipes, logs and `--json` consumers never see control characters).
 */
export function progressStream(
  io: CliIo,
  label: string,
  total: number | null,
): TransformStream<Uint8Array, Uint8Array> | null {
  if (!io.stderr.isTTY || total === null || total < PROGRESS_THRESHOLD_BYTES) return null;
  let done = 0;
  let lastDraw = 0;
  const draw = () => io.stderr.write(`\r${renderProgress(label, done, total)}\u001b[K`);
  return new TransformStream({
    transform(chunk, controller) {
      done += chunk.byteLength;
      const now = Date.now();
      if (now - lastDraw >= REDRAW_INTERVAL_MS) {
        lastDraw = now;
        draw();
      }
      controller.enqueue(chunk);
    },
    flush() {
      draw();
      io.stderr.write("\n");
    },
  });
}
