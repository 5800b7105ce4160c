import type { CliIo } from "../cli-io.ts";
import { formatBytes } from "../human-format.ts";

const REDRAW_INTERVAL_MS = 100;

/**
 * One line of counts on stderr while an export or import runs, redrawn at
 * most every 100 ms, and only when stderr is a terminal: pipes, logs and
 * `--json` consumers never see control characters.
 */
export class Progress {
  #last = 0;
  #drawn = false;

  constructor(
    private readonly io: CliIo,
    private readonly label: string,
  ) {}

  show(counts: { caps: number; files: number; blobs: number; bytes: number }): void {
    if (!this.io.stderr.isTTY) return;
    const now = Date.now();
    if (now - this.#last < REDRAW_INTERVAL_MS) return;
    this.#last = now;
    this.#drawn = true;
    this.io.stderr.write(
      `\r${this.label}: ${counts.caps} caps, ${counts.files} files, ${counts.blobs} versions, ${formatBytes(counts.bytes)}\u001b[K`,
    );
  }

  done(): void {
    if (this.#drawn) this.io.stderr.write("\r\u001b[K");
    this.#drawn = false;
  }
}
