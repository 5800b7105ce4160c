import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DiskStorage } from "../../storage-adapters/disk-storage.ts";
import { R2Storage } from "../../storage-adapters/r2-storage.ts";
import type { StorageAdapter } from "../../storage-adapters/storage-adapter.ts";
import { newBlobName } from "../../storage-adapters/version-blobs.ts";
import { WHOLE_BODY_MAX } from "../../storage-adapters/whole-body.ts";
import { entryAt, fileAt, rootAt } from "../checked-paths.ts";

/**
 * Expiry's backup when its timer is late or never set: the cap object's
 * body guard errors a body that ends after `expiresAt`, at its very end,
 * after every declared byte went through (cutOnAbort's flush). Each backend
 * must then store nothing: here the body fails by construction, with no
 * clock and no timer involved, so the check is the commit's alone.
 */
let counter = 0;

const backends: [string, () => StorageAdapter][] = [
  ["r2", () => new R2Storage(env.BUCKET)],
  ["disk", () => new DiskStorage(env.DISK!, env.CAPVAULT_DISK_SECRET!)],
];

/** Every one of `length` bytes, then an error at the end: what a body completing past expiry becomes. */
function failsAtItsEnd(length: number): ReadableStream<Uint8Array> {
  const bytes = new Uint8Array(length).fill(0x78);
  const guard = new TransformStream<Uint8Array, Uint8Array>({
    flush() {
      throw new Error("expired");
    },
  });
  const writer = guard.writable.getWriter();
  void (async () => {
    for (let at = 0; at < length; at += 16 * 1024) await writer.write(bytes.slice(at, at + 16 * 1024));
    await writer.close();
  })().catch(() => undefined);
  return guard.readable;
}

describe.each(backends)("%s backend: a body failing after its last byte", (backend, make) => {
  const sizes: [string, number][] = [
    ["small (read whole)", 100],
    ["large (streamed)", WHOLE_BODY_MAX + 64 * 1024],
  ];
  for (const [size, length] of sizes) {
    for (const keep of [false, true]) {
      it(`${size}, ${keep ? "keeping a version" : "no version"}: stores nothing`, async () => {
        const storage = make();
        const root = [`expiry-commit/${backend}/${++counter}/`];
        expect((await storage.prepareRoot(rootAt(root), { create: true })).ok).toBe(true);
        const at = fileAt(root, "late.bin");
        const written = await storage.write(at, failsAtItsEnd(length), {
          length,
          contentType: "application/octet-stream",
          ...(keep ? { keepAs: newBlobName() } : {}),
        });
        expect(written.ok).toBe(false);
        const stat = await storage.stat(entryAt(root, "late.bin"));
        expect(stat.ok ? "stored" : stat.error.code).toBe("not_found");
      });
    }
  }
});
