import { constants } from "node:fs";
import { open } from "node:fs/promises";
import { Readable } from "node:stream";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import type { WriteResult } from "../../clients/typescript/index.ts";
import { guessContentType } from "./content-type-guess.ts";
import { LocalRefusal } from "./local-refusal.ts";

/** Below this, a file is read whole and sent as bytes (under the progress bar's 4 MiB threshold). */
const SMALL_FILE_BYTES = 1024 * 1024;

export interface UploadOptions {
  contentType?: string | undefined;
  ifMatch?: string | undefined;
  ifNoneMatch?: string | undefined;
  /** Wraps the body (a progress bar). */
  through?: (size: number) => TransformStream<Uint8Array, Uint8Array> | null;
  onBytes?: (count: number) => void;
}

/**
 * Uploads one local file with its exact size. It is opened with O_NOFOLLOW
 * and its size taken from the open file, so a symlink swapped in after the
 * folder was walked is refused rather than followed out of the folder, and
 * the length sent is the length of what is read.
 */
export async function uploadFile(
  cap: FsCap,
  local: string,
  remote: string,
  options: UploadOptions = {},
): Promise<WriteResult> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(local, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ELOOP") throw new LocalRefusal("symlink", "a symlink; not followed");
    throw error;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new LocalRefusal("not_a_file", "not a regular file");
    const writeOptions = {
      contentType: options.contentType ?? guessContentType(remote),
      ifMatch: options.ifMatch,
      ifNoneMatch: options.ifNoneMatch,
    };
    if (info.size <= SMALL_FILE_BYTES) {
      // Most files of a folder sync are small: one read and a plain body cost less than a stream pipeline.
      const bytes = await handle.readFile();
      const result = await cap.write(remote, bytes, writeOptions);
      options.onBytes?.(bytes.byteLength);
      return result;
    }
    let body = Readable.toWeb(handle.createReadStream({ autoClose: false })) as unknown as ReadableStream<Uint8Array>;
    const bar = options.through?.(info.size) ?? null;
    if (bar) body = body.pipeThrough(bar);
    const onBytes = options.onBytes;
    if (onBytes) {
      const count = new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          onBytes(chunk.byteLength);
          controller.enqueue(chunk);
        },
      });
      body = body.pipeThrough(count);
    }
    return await cap.write(remote, body, { ...writeOptions, length: info.size });
  } finally {
    await handle.close();
  }
}
