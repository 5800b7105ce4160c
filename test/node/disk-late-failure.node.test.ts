/**
 * The disk backend run in Node (as the disk tests run it), a body that fails
 * after its last byte: the host has had every declared byte, and must still
 * store nothing, no version blob either. In workerd copyChunks holds the last
 * chunk back (expiry-commit.workers checks it there); here the host reads the
 * failing stream itself, and this checks it stores nothing of it either.
 */

import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { newBlobName, VERSIONS_DIR_NAME } from "../../storage-adapters/version-blobs.ts";
import { entryAt, fileAt } from "../checked-paths.ts";
import { fixtureEach, listTree } from "./disk-fixture.ts";

/** Every one of `length` bytes, then an error where the end would be. */
function failsAtItsEnd(length: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= length) return controller.error(new Error("expired"));
      const size = Math.min(16 * 1024, length - at);
      controller.enqueue(new Uint8Array(size).fill(0x78));
      at += size;
    },
  });
}

describe("disk backend in Node: a body failing after its last byte", () => {
  const fx = fixtureEach(["r/"]);
  for (const length of [100, 320 * 1024]) {
    for (const keep of [false, true]) {
      it(`${length} bytes, ${keep ? "keeping a version" : "no version"}: stores nothing`, async () => {
        const written = await fx.storage.write(fileAt(["r/"], "late.bin"), failsAtItsEnd(length), {
          length,
          contentType: "application/octet-stream",
          ...(keep ? { keepAs: newBlobName() } : {}),
        });
        expect(written.ok).toBe(false);
        const stat = await fx.storage.stat(entryAt(["r/"], "late.bin"));
        expect(stat.ok ? "stored" : stat.error.code).toBe("not_found");
        // No file left behind: not in the cap's folder, not in the versions folder.
        expect(await listTree(join(fx.base, "r"))).toEqual([]);
        expect(await listTree(join(fx.base, VERSIONS_DIR_NAME))).toEqual([]);
      });
    }
  }
});
