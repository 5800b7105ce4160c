/**
 * The disk backend against the StorageAdapter contract, on real folders:
 * DiskStorage (worker side) driving the real disk host through the wire protocol:
 * round trips, preconditions and lengths, folders. Conflicts, listing, stale
 * temps and configuration: disk-semantics-edges.node.test.ts.
 */

import { lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Root } from "../../storage-adapters/storage-adapter.ts";
import { checked, dirAt, entryAt, fileAt, rootAt } from "../checked-paths.ts";
import { bodyOf, expectCode, expectOk, fixtureEach, getText, md5, put, sha256 } from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
const fx = fixtureEach(ROOT, { checked: true });

const names = async (path = "", root: Root = ROOT) =>
  expectOk(await fx.storage.list(dirAt(root, path), { after: null, limit: 1000 })).entries.map(
    (e) => `${e.name}:${e.type}`,
  );

describe("round trip", () => {
  it("stores bytes, content type and an MD5 etag computed while streaming", async () => {
    const content = "hello, vault — ünïcødé\n".repeat(100);
    const written = expectOk(
      await put(fx.storage, ROOT, "notes/today.md", content, { contentType: "text/markdown; charset=utf-8" }),
    );
    expect(written).toEqual({
      created: true,
      size: Buffer.byteLength(content),
      etag: md5(content),
      sha256: sha256(content),
      kept: false,
    });
    expect(await readFile(join(fx.base, "r/notes/today.md"), "utf8")).toBe(content);

    const read = expectOk(await fx.storage.read(fileAt(ROOT, "notes/today.md"), {}));
    if (read.status !== "body") throw new Error(read.status);
    expect(read.meta).toMatchObject({
      size: Buffer.byteLength(content),
      etag: md5(content),
      contentType: "text/markdown; charset=utf-8",
    });
    expect(await new Response(read.body).text()).toBe(content);
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "notes/today.md")))).toMatchObject({
      type: "file",
      etag: md5(content),
    });

    const replaced = expectOk(await put(fx.storage, ROOT, "notes/today.md", "v2", { contentType: "text/x-other" }));
    expect(replaced).toEqual({ created: false, size: 2, etag: md5("v2"), sha256: sha256("v2"), kept: false });
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "notes/today.md")))).toMatchObject({
      contentType: "text/x-other",
      size: 2,
    });
  });

  it("round-trips a 3 MiB binary body and an empty one", async () => {
    const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 7919) % 251);
    const w = await fx.storage.write(fileAt(ROOT, "big.bin"), bodyOf(big, 65_536), {
      length: big.length,
      contentType: "application/x-big",
    });
    expect(expectOk(w).etag).toBe(md5(big));
    const read = expectOk(await fx.storage.read(fileAt(ROOT, "big.bin"), {}));
    if (read.status !== "body") throw new Error(read.status);
    expect(md5(new Uint8Array(await new Response(read.body).arrayBuffer()))).toBe(md5(big));

    expect(expectOk(await put(fx.storage, ROOT, "empty", "")).etag).toBe(md5(""));
    expect(expectOk(await getText(fx.storage, ROOT, "empty"))).toBe("");
  });

  it("keeps a content type far longer than an HTTP header allows", async () => {
    const contentType = `text/plain; x=${"y".repeat(20_000)}`;
    expectOk(await put(fx.storage, ROOT, "long-type.txt", "x", { contentType }));
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "long-type.txt")))).toMatchObject({ contentType });
  });

  it("computes etags of files placed and edited by hand, and serves them as octet-stream", async () => {
    await writeFile(join(fx.base, "r/by-hand.txt"), "placed by hand");
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "by-hand.txt")))).toMatchObject({
      etag: md5("placed by hand"),
      contentType: "application/octet-stream",
    });
    expectOk(await put(fx.storage, ROOT, "edited.txt", "original", { contentType: "text/plain" }));
    await writeFile(join(fx.base, "r/edited.txt"), "edited in place!");
    const after = expectOk(await fx.storage.stat(entryAt(ROOT, "edited.txt")));
    expect(after).toMatchObject({ etag: md5("edited in place!"), size: 16, contentType: "text/plain" });
    const listed = expectOk(await fx.storage.list(dirAt(ROOT, ""), { after: null, limit: 10 })).entries;
    expect(listed.find((e) => e.name === "edited.txt")?.etag).toBe(md5("edited in place!"));
  });

  it("serves ranges, unsatisfiable ranges and If-None-Match", async () => {
    expectOk(await put(fx.storage, ROOT, "r.txt", "0123456789"));
    const ranged = expectOk(await fx.storage.read(fileAt(ROOT, "r.txt"), { range: "bytes=2-4" }));
    if (ranged.status !== "body") throw new Error(ranged.status);
    expect(ranged.range).toEqual({ start: 2, end: 4 });
    expect(await new Response(ranged.body).text()).toBe("234");
    const suffix = expectOk(await fx.storage.read(fileAt(ROOT, "r.txt"), { range: "bytes=-3" }));
    if (suffix.status !== "body") throw new Error(suffix.status);
    expect(await new Response(suffix.body).text()).toBe("789");
    expect(expectOk(await fx.storage.read(fileAt(ROOT, "r.txt"), { range: "bytes=10-" })).status).toBe("unsatisfiable");
    expect(
      expectOk(await fx.storage.read(fileAt(ROOT, "r.txt"), { ifNoneMatch: `"${md5("0123456789")}"` })).status,
    ).toBe("not_modified");
    const other = expectOk(await fx.storage.read(fileAt(ROOT, "r.txt"), { ifNoneMatch: '"other"' }));
    if (other.status !== "body") throw new Error(other.status);
    await other.body.cancel();
  });
});

describe("preconditions and lengths", () => {
  it("honours If-None-Match: * and If-Match, changing nothing when they fail", async () => {
    expectOk(await put(fx.storage, ROOT, "p.txt", "one", { ifNoneMatch: "*" }));
    expectCode(await put(fx.storage, ROOT, "p.txt", "two", { ifNoneMatch: "*" }), "precondition_failed");
    expectCode(await put(fx.storage, ROOT, "p.txt", "two", { ifMatch: '"0000"' }), "precondition_failed");
    expect(await readFile(join(fx.base, "r/p.txt"), "utf8")).toBe("one");
    expect(expectOk(await put(fx.storage, ROOT, "p.txt", "two", { ifMatch: `"${md5("one")}"` })).created).toBe(false);
    expect(await readFile(join(fx.base, "r/p.txt"), "utf8")).toBe("two");
  });

  it("refuses If-Match on a missing file without leaving the folders it would have needed", async () => {
    expectCode(await put(fx.storage, ROOT, "new/deep/p.txt", "x", { ifMatch: '"abc"' }), "precondition_failed");
    expect(await readdir(join(fx.base, "r"))).toEqual([]);
  });

  it("refuses a body shorter or longer than its length, leaving no file, temp or folder", async () => {
    const short = await fx.storage.write(fileAt(ROOT, "a/short.txt"), bodyOf("abc"), {
      length: 10,
      contentType: "text/plain",
    });
    expect(short).toEqual({
      ok: false,
      error: { code: "bad_request", message: "the body did not match its Content-Length" },
    });
    expectCode(
      await fx.storage.write(fileAt(ROOT, "a/long.txt"), bodyOf("abcdefghijkl"), {
        length: 3,
        contentType: "text/plain",
      }),
      "bad_request",
    );
    expect(await readdir(join(fx.base, "r"))).toEqual([]);
  });

  // The chokepoint refuses these before any adapter sees them (an adapter takes only checked paths).
  it("refuses file operations on the root and keys over R2's limit", async () => {
    expectCode(checked(ROOT, "", "file"), "invalid_path");
    expectCode(await put(fx.storage, ROOT, "", "x"), "invalid_path");
    // Each alone is within limits; root + path is over R2's 1,024-byte key limit.
    const longRoot: Root = [`${"a".repeat(250)}/${"b".repeat(250)}/${"c".repeat(250)}/`];
    const longPath = `${"d".repeat(200)}/${"e".repeat(100)}`;
    expectOk(await fx.storage.prepareRoot(rootAt(longRoot), { create: true }));
    expectCode(checked(longRoot, longPath, "entry"), "invalid_path");
    expectCode(await put(fx.storage, longRoot, longPath, "x"), "invalid_path");
    expectCode(checked(longRoot, longPath, "dir"), "invalid_path");
    expectOk(await put(fx.storage, longRoot, "d".repeat(200), "fits"));
  });
});

describe("folders exist once made or once they held a file, until removed while empty", () => {
  it("creates folders on write (0700, files 0600); an emptied one stays, marked, until removed while empty", async () => {
    expectOk(await put(fx.storage, ROOT, "a/b/c.txt", "x"));
    expect((await stat(join(fx.base, "r/a/b"))).mode & 0o777).toBe(0o700);
    expect((await stat(join(fx.base, "r/a/b/c.txt"))).mode & 0o777).toBe(0o600);
    expect((await stat(join(fx.base, "r"))).mode & 0o777).toBe(0o700);
    expectOk(await fx.storage.remove(fileAt(ROOT, "a/b/c.txt")));
    expect(await names()).toEqual(["a:dir"]);
    expect(await names("a")).toEqual(["b:dir"]);
    expect(await names("a/b")).toEqual([]);
    expect(await readdir(join(fx.base, "r/a/b"))).toEqual([".capvault-folder"]);
    expect((await stat(join(fx.base, "r/a/b/.capvault-folder"))).mode & 0o777).toBe(0o600);
    // Removed only while empty, innermost first; the cap's root is kept as R2 keeps `r/` (a folder of the bucket).
    expectCode(await fx.storage.removeDir(rootAt(["r/", "a/"])), "conflict");
    expectOk(await fx.storage.removeDir(rootAt(["r/", "a/b/"])));
    expect(await names("a")).toEqual([]);
    expectOk(await fx.storage.removeDir(rootAt(["r/", "a/"])));
    expectCode(await fx.storage.removeDir(rootAt(["r/", "a/"])), "not_found");
    expect(await readdir(join(fx.base, "r"))).toEqual([".capvault-folder"]);
    expect(await names()).toEqual([]);

    // A child cap rooted at r/a/: the folder its file left stays too.
    expectOk(await put(fx.storage, ROOT, "a/b/c.txt", "x"));
    expectOk(await fx.storage.remove(fileAt(["r/", "a/"], "b/c.txt")));
    expect((await readdir(join(fx.base, "r"))).sort()).toEqual([".capvault-folder", "a"]);
    expect(await readdir(join(fx.base, "r/a"))).toEqual(["b"]);
    expect(await readdir(join(fx.base, "r/a/b"))).toEqual([".capvault-folder"]);
  });

  it("keeps a replaced file's own mode", async () => {
    await writeFile(join(fx.base, "r/shared.txt"), "x", { mode: 0o644 });
    expectOk(await put(fx.storage, ROOT, "shared.txt", "y"));
    expect((await stat(join(fx.base, "r/shared.txt"))).mode & 0o777).toBe(0o644);
  });

  it("hides folders that hold no file: empty, only temps, only unaddressable names", async () => {
    await mkdir(join(fx.base, "r/empty/deeper"), { recursive: true });
    await mkdir(join(fx.base, "r/temps"));
    await writeFile(join(fx.base, "r/temps/.capvault-tmp-0123"), "partial");
    await mkdir(join(fx.base, "r/odd"));
    await writeFile(join(fx.base, "r/odd/back\\slash"), "x");
    expectOk(await put(fx.storage, ROOT, "real/f.txt", "x"));
    expect(await names()).toEqual(["real:dir"]);
    for (const hidden of ["empty", "empty/deeper", "temps", "odd"]) {
      expectCode(await fx.storage.stat(entryAt(ROOT, hidden)), "not_found");
      expectCode(await fx.storage.list(dirAt(ROOT, hidden), { after: null, limit: 10 }), "not_found");
      expectCode(await fx.storage.read(fileAt(ROOT, hidden), {}), "not_found");
      expectCode(await fx.storage.remove(fileAt(ROOT, hidden)), "not_found");
    }
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "real")))).toEqual({ type: "dir" });
  });

  it("keeps a folder the API emptied until removed; a write or a move takes only an unmarked empty folder", async () => {
    // Left by the API itself: a child cap's root stays when its last file goes, and nothing takes its name.
    expectOk(await put(fx.storage, ROOT, "child/f", "x"));
    expectOk(await fx.storage.remove(fileAt(["r/", "child/"], "f")));
    expectCode(await put(fx.storage, ROOT, "child", "now a file"), "conflict");
    expectOk(await put(fx.storage, ROOT, "src", "x"));
    expectCode(await fx.storage.move(fileAt(ROOT, "src"), fileAt(ROOT, "child"), true), "conflict");
    expect(await names("child")).toEqual([]);
    expectOk(await fx.storage.removeDir(rootAt(["r/", "child/"])));
    expectOk(await put(fx.storage, ROOT, "child", "now a file"));
    expect(expectOk(await getText(fx.storage, ROOT, "child"))).toBe("now a file");

    // Folders made by hand (no marker) and empty count for nothing, as on R2.

    await mkdir(join(fx.base, "r/tree/deeper/deepest"), { recursive: true });
    expect(expectOk(await put(fx.storage, ROOT, "tree", "t"))).toMatchObject({ created: true });
    await mkdir(join(fx.base, "r/empty"));
    expectOk(await put(fx.storage, ROOT, "src", "moved"));
    expectOk(await fx.storage.move(fileAt(ROOT, "src"), fileAt(ROOT, "empty"), false));
    expect(expectOk(await getText(fx.storage, ROOT, "empty"))).toBe("moved");

    // A folder holding anything at all (a write's temp, a link, a file a cap cannot name) is kept, and refuses.
    await mkdir(join(fx.base, "r/busy/sub"), { recursive: true });
    await writeFile(join(fx.base, "r/busy/sub/.capvault-tmp-0123"), "partial");
    await mkdir(join(fx.base, "r/linked"));
    await symlink(fx.outside, join(fx.base, "r/linked/out"));
    await mkdir(join(fx.base, "r/odd"));
    await writeFile(join(fx.base, "r/odd/back\\slash"), "x");
    for (const name of ["busy", "linked", "odd"]) {
      expect(await put(fx.storage, ROOT, name, "x")).toEqual({
        ok: false,
        error: { code: "conflict", message: "that path is a directory" },
      });
      expectOk(await put(fx.storage, ROOT, "src", "x"));
      expectCode(await fx.storage.move(fileAt(ROOT, "src"), fileAt(ROOT, name), true), "conflict");
    }
    expect(await readFile(join(fx.base, "r/busy/sub/.capvault-tmp-0123"), "utf8")).toBe("partial");
    expect(await readlink(join(fx.base, "r/linked/out"))).toBe(fx.outside);
    expect((await lstat(join(fx.base, "r/odd/back\\slash"))).isFile()).toBe(true);
    // A link to an empty folder is the operator's, not an empty folder: refused, kept.
    await mkdir(join(fx.base, "r/target"));
    await symlink("target", join(fx.base, "r/via-link"));
    expectCode(await put(fx.storage, ROOT, "via-link", "x"), "conflict");
    expect(await readlink(join(fx.base, "r/via-link"))).toBe("target");
  });

  it("treats a root that does not exist (yet) as empty, and creates it on write", async () => {
    const root: Root = ["not-yet/"];
    expect(expectOk(await fx.storage.list(dirAt(root, ""), { after: null, limit: 10 }))).toEqual({
      entries: [],
      next: null,
    });
    expect(expectOk(await fx.storage.stat(entryAt(root, "")))).toEqual({ type: "dir" });
    expectCode(await fx.storage.read(fileAt(root, "x"), {}), "not_found");
    expectCode(await fx.storage.list(dirAt(root, "x"), { after: null, limit: 10 }), "not_found");
    expectOk(await fx.storage.prepareRoot(rootAt(root), { create: false }));
    await expect(stat(join(fx.base, "not-yet"))).rejects.toThrow();
    expectOk(await put(fx.storage, root, "x", "made"));
    expect(await readFile(join(fx.base, "not-yet/x"), "utf8")).toBe("made");
  });
});
