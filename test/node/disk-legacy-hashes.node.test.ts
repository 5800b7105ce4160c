/**
 * Files placed by hand, or whose sidecar predates sha256, are hashed once and
 * the hashes kept in their sidecar: listing a folder of big such files must
 * not re-read every byte of every file on each listing (or after a restart).
 */
import { readdir, readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expect, it } from "vitest";
import { createDiskHost } from "../../disk-host/index.ts";
import { META_DIR_NAME } from "../../disk-host/meta-store.ts";
import type { ListEntry } from "../../shared/wire-types.ts";
import { DiskStorage } from "../../storage-adapters/disk-storage.ts";
import type { Root } from "../../storage-adapters/storage-adapter.ts";
import { dirAt, entryAt } from "../checked-paths.ts";
import { expectOk, fixtureEach, put, sha256 } from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
const FILES = 20;
/** A whole second, so utimes can set the very same mtime (ns) again. */
const MTIME = 1_700_000_000;
const fx = fixtureEach(ROOT);

async function listed(storage: DiskStorage): Promise<ListEntry[]> {
  return expectOk(await storage.list(dirAt(ROOT, ""), { after: null, limit: 1000, depth: 0 })).entries;
}

/** Rewrites a file in place with other bytes of the same length, and puts its mtime back. */
async function editKeepingSizeAndMtime(path: string, content: string): Promise<void> {
  await writeFile(path, content);
  await utimes(path, MTIME, MTIME);
}

it("each legacy or hand-placed file is hashed once: a listing after a restart reads the hashes kept, not the bytes", async () => {
  const paths = Array.from({ length: FILES }, (_, i) => join(fx.base, "r", `h${String(i).padStart(2, "0")}.txt`));
  for (const path of paths) {
    await writeFile(path, "old bytes ".repeat(100));
    await utimes(path, MTIME, MTIME);
  }
  // Written through the vault, then its sidecar made legacy (no sha256) and the file's mtime moved by hand.
  expectOk(await put(fx.storage, ROOT, "v.md", "vault bytes", { contentType: "text/markdown" }));
  const metaDir = join(fx.base, META_DIR_NAME);
  for (const name of await readdir(metaDir)) {
    const sidecar = JSON.parse(await readFile(join(metaDir, name), "utf8"));
    delete sidecar.sha256;
    await writeFile(join(metaDir, name), JSON.stringify(sidecar));
  }
  await utimes(join(fx.base, "r", "v.md"), MTIME, MTIME);

  const first = await listed(fx.storage);
  expect(first.map((e) => e.sha256)).toEqual([
    ...paths.map(() => sha256("old bytes ".repeat(100))),
    sha256("vault bytes"),
  ]);

  // A restart: a second host over the same folder, with nothing cached in memory.
  const host = createDiskHost({ baseDir: fx.base, secret: fx.secret });
  try {
    const storage = new DiskStorage({ fetch: (request) => host.fetch(request) }, fx.secret);
    // Same size, same mtime: only a re-read of the bytes could see this edit.
    for (const path of paths) await editKeepingSizeAndMtime(path, "new bytes ".repeat(100));
    await editKeepingSizeAndMtime(join(fx.base, "r", "v.md"), "VAULT BYTES");
    expect(await listed(storage)).toEqual(first);
    // The content type of the legacy sidecar survived the hashes being stored beside it.
    expect(expectOk(await storage.stat(entryAt(ROOT, "v.md")))).toMatchObject({ contentType: "text/markdown" });

    // An edit that moves the mtime is seen, as for any sidecar.
    await writeFile(paths[0]!, "new bytes ".repeat(100));
    expect((await listed(storage))[0]!.sha256).toBe(sha256("new bytes ".repeat(100)));
  } finally {
    await host.close();
  }
});
