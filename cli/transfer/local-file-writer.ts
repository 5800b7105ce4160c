import { createHash, randomBytes } from "node:crypto";
import { lstat, open, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { LocalRefusal } from "./local-refusal.ts";

/** What a download should turn out to be, from the response headers. */
export interface Expected {
  length: number | null;
  /** The vault's etag (hex MD5 of the whole file), checked against the bytes written. */
  etag: string | null;
}

/**
 * Writes a downloaded body to `target` atomically: into a fresh temp file
 * beside it (opened with O_EXCL, so a link planted at the temp name is not
 * followed), then renamed over `target`. A target that is a symlink is
 * refused, not written through or replaced. Readers see the old file or the
 * new one, and a failed or short download leaves nothing behind. Returns
 * the bytes written.
 */
export async function writeLocalFile(
  target: string,
  body: ReadableStream<Uint8Array>,
  expected: Expected,
  onBytes: (count: number) => void = () => {},
): Promise<number> {
  const existing = await lstat(target).catch(() => null);
  if (existing?.isSymbolicLink()) {
    await body.cancel();
    throw new LocalRefusal("symlink", "the local target is a symlink; not replaced");
  }
  if (existing?.isDirectory()) {
    await body.cancel();
    throw new LocalRefusal("is_folder", "the local target is a folder");
  }
  const temp = path.join(path.dirname(target), `.capvault-${randomBytes(8).toString("hex")}.part`);
  const file = await open(temp, "wx");
  const md5 = createHash("md5");
  let written = 0;
  try {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      await file.write(chunk);
      md5.update(chunk);
      written += chunk.byteLength;
      onBytes(chunk.byteLength);
    }
    await file.close();
    if (expected.length !== null && written !== expected.length) {
      throw new LocalRefusal("integrity", `received ${written} bytes of ${expected.length}`);
    }
    if (
      expected.etag !== null &&
      /^[0-9a-f]{32}$/i.test(expected.etag) &&
      md5.digest("hex") !== expected.etag.toLowerCase()
    ) {
      throw new LocalRefusal("integrity", "the bytes received do not match the vault's etag");
    }
    await rename(temp, target);
    return written;
  } catch (error) {
    await file.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw error;
  }
}
