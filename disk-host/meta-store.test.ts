import { execFileSync } from "node:child_process";
import { constants } from "node:fs";
import { link, lstat, mkdir, mkdtemp, readFile, rm, stat as statOf, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { identity, MetaStore } from "./meta-store.ts";
import { type FileHandle, open } from "./sync-fs.ts";

// A new file's sidecar is written in place under the file's identity (no temp, no rename): a name
// already there is a dead inode's, or something planted, and must be replaced, never written through.

let dir: string;
let metaDir: FileHandle;
let meta: MetaStore;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "capvault-meta-"));
  await mkdir(path.join(dir, "meta"));
  metaDir = await open(path.join(dir, "meta"), constants.O_RDONLY | constants.O_DIRECTORY);
  meta = new MetaStore(metaDir);
});

afterEach(async () => {
  await meta.close();
  await rm(dir, { recursive: true, force: true });
});

const HASHES = { etag: "0".repeat(32), sha256: "1".repeat(64) };

/** A file as a write's temp would be, open, with its stat. */
async function temp(bytes: string) {
  await writeFile(path.join(dir, "f"), bytes);
  const file = await open(path.join(dir, "f"), constants.O_RDONLY);
  return { file, stat: await file.stat({ bigint: true }) };
}

describe("MetaStore.record", () => {
  it("writes the sidecar a describe reads back", async () => {
    const { file, stat } = await temp("hello");
    await meta.record(stat, HASHES, "text/markdown");
    expect(await meta.describe(file, stat)).toMatchObject({ size: 5, ...HASHES, contentType: "text/markdown" });
    await file.close();
  });

  it("replaces a stale sidecar under the same identity", async () => {
    const { file, stat } = await temp("hello");
    await writeFile(path.join(dir, "meta", identity(stat)), "a sidecar of a file long gone, and longer than this one");
    await meta.record(stat, HASHES, "text/plain");
    expect(await meta.describe(file, stat)).toMatchObject({ ...HASHES, contentType: "text/plain" });
    await file.close();
  });
});

// What may already sit under a new file's identity, planted by someone with host access: never
// written through, never hung on, never changed outside the meta folder.
describe("MetaStore.record over a planted name", () => {
  it.each([
    ["a symbolic link", symlink],
    ["a hard link", link],
  ] as const)("%s to a file outside: only the name is replaced, the outside file is untouched", async (_, plant) => {
    const { file, stat } = await temp("hello");
    const outside = path.join(dir, "outside.txt");
    await writeFile(outside, "not the vault's");
    await plant(outside, path.join(dir, "meta", identity(stat)));
    await meta.record(stat, HASHES, "text/plain");
    expect(await readFile(outside, "utf8")).toBe("not the vault's");
    expect((await statOf(outside)).nlink).toBe(1);
    expect((await lstat(path.join(dir, "meta", identity(stat)))).isFile()).toBe(true);
    expect(await meta.describe(file, stat)).toMatchObject({ ...HASHES, contentType: "text/plain" });
    await file.close();
  });

  it("a FIFO: replaced, never opened (an open for writing would wait for a reader forever)", async () => {
    const { file, stat } = await temp("hello");
    execFileSync("mkfifo", [path.join(dir, "meta", identity(stat))]);
    await meta.record(stat, HASHES, "text/plain");
    expect((await lstat(path.join(dir, "meta", identity(stat)))).isFile()).toBe(true);
    expect(await meta.describe(file, stat)).toMatchObject({ contentType: "text/plain" });
    await file.close();
  }, 5_000);

  it("a folder: the record fails (as the rename before fd399e8 did), and nothing inside it is written", async () => {
    const { file, stat } = await temp("hello");
    await mkdir(path.join(dir, "meta", identity(stat)));
    await expect(meta.record(stat, HASHES, "text/plain")).rejects.toThrow();
    expect((await lstat(path.join(dir, "meta", identity(stat)))).isDirectory()).toBe(true);
    await file.close();
  });
});
