import type { CliIo } from "../cli-io.ts";
import { formatBytes } from "../human-format.ts";

const REDRAW_INTERVAL_MS = 100;

/** `12/1000 files  3.4 MiB / 10.0 MiB`: one line for a whole folder transfer. Pure, tested without a terminal. */
export function renderFilesProgress(files: number, totalFiles: number, bytes: number, totalBytes: number): string {
  return `${files}/${totalFiles} files  ${formatBytes(bytes)} / ${formatBytes(totalBytes)}`;
}

/**
 * Progress across the files of one transfer, redrawn in place on stderr, or
 * `null` when stderr is not a terminal (pipes and logs never see control
 * characters). Files found unchanged count as done, with their bytes.
 */
export function filesProgress(io: CliIo, totalFiles: number, totalBytes: number) {
  if (!io.stderr.isTTY || totalFiles === 0) return null;
  let files = 0;
  let bytes = 0;
  let lastDraw = 0;
  const draw = () => io.stderr.write(`\r${renderFilesProgress(files, totalFiles, bytes, totalBytes)}\u001b[K`);
  const maybeDraw = () => {
    const now = Date.now();
    if (now - lastDraw >= REDRAW_INTERVAL_MS) {
      lastDraw = now;
      draw();
    }
  };
  return {
    bytes(count: number) {
      bytes += count;
      maybeDraw();
    },
    fileDone() {
      files++;
      maybeDraw();
    },
    finish() {
      draw();
      io.stderr.write("\n");
    },
  };
}

export type FilesProgress = NonNullable<ReturnType<typeof filesProgress>>;
