import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import type { CliIo } from "../cli-io.ts";
import { pumpToWritable } from "./byte-pump.ts";
import { writeLocalFile } from "./local-file-writer.ts";
import { progressStream } from "./progress-bar.ts";

export interface Downloaded {
  path: string;
  local: string;
  size: number;
  etag: string;
}

/**
 * Downloads one file to `local` (atomically, checked against the vault's
 * etag), or to stdout when `local` is `-`. A progress bar for large files
 * when stderr is a terminal.
 */
export async function downloadFile(io: CliIo, cap: FsCap, remote: string, local: string): Promise<Downloaded | null> {
  const file = await cap.readStream(remote);
  if (file.notModified) return null;
  const bar = progressStream(io, remote, file.meta.length);
  const body = bar ? file.body.pipeThrough(bar) : file.body;
  if (local === "-") {
    await pumpToWritable(body, io.stdout);
    return null;
  }
  const size = await writeLocalFile(local, body, { length: file.meta.length, etag: file.meta.etag });
  return { path: remote, local, size, etag: file.meta.etag };
}
