import type { FileHandle } from "./sync-fs.ts";

const CHUNK = 64 * 1024;

/**
 * Streams bytes `start..end` (inclusive) of an open file, a chunk per pull,
 * then closes it. It reads the inode that was opened, so a writer renaming a
 * new file into place meanwhile cannot mix two versions. If the file is cut
 * short by hand while streaming, the stream errors rather than end early: the
 * receiver was promised `end - start + 1` bytes.
 */
export function fileRangeStream(file: FileHandle, start: number, end: number): ReadableStream<Uint8Array> {
  let position = start;
  const stop = end + 1;
  const close = () => file.close().catch(() => undefined);
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          if (position >= stop) {
            await close();
            return controller.close();
          }
          const want = Math.min(CHUNK, stop - position);
          const chunk = new Uint8Array(want);
          const { bytesRead } = await file.read(chunk, 0, want, position);
          if (bytesRead === 0) throw new Error("the file shrank while it was read");
          position += bytesRead;
          controller.enqueue(bytesRead === want ? chunk : chunk.subarray(0, bytesRead));
        } catch {
          await close();
          controller.error(new Error("the file could not be read to its end"));
        }
      },
      cancel: close,
    },
    { highWaterMark: 1 },
  );
}
