/**
 * The SDK against the real launcher (Miniflare): the hostile paths of the
 * hermes-fs-as-cap test vector arriving at the server as typed CapErrors, the
 * file methods, pagination, and the cap token never appearing in an error.
 * Caps, admin and watch are in fs-cap-caps.node.test.ts.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/index.ts";
import { md5, type SdkFixture, sdkFixture, sha256 } from "./fs-cap-fixture.ts";
import type { SharedVault } from "./shared-vault.ts";

let vault: SharedVault;
let fs: FsCap;
let t: SdkFixture;
let refusal: SdkFixture["refusal"];

beforeAll(async () => {
  t = await sdkFixture("fs-cap");
  ({ vault, fs, refusal } = t);
});

describe("the hermes-fs-as-cap test vector", () => {
  it("hostile paths reach the server and come back as typed CapErrors", async () => {
    await fs.write("skills/hermes-fs-as-cap/SKILL.md", "# skill\n");
    await fs.write("skills/other-skill/SKILL.md", "# other\n");

    expect(await refusal(fs.read("../../../etc/passwd"))).toMatchObject({
      code: "path_escapes",
      status: 400,
      message: "path escapes",
    });
    expect(await refusal(fs.read("/etc/passwd"))).toMatchObject({
      code: "absolute_path",
      status: 400,
      message: "absolute paths forbidden",
    });

    const sub = await fs.subdir({ path: "skills" });
    expect(await sub.readText("hermes-fs-as-cap/SKILL.md")).toBe("# skill\n");
    expect(await refusal(sub.read("../other-skill/SKILL.md"))).toMatchObject({ code: "path_escapes", status: 400 });
  });

  it("on the disk backend, verbatim, including the symlink out of the root", async () => {
    const disk = new FsCap(vault.diskCapUrl);
    await mkdir(path.join(vault.diskRoot, "skills/hermes-fs-as-cap"), { recursive: true });
    await writeFile(path.join(vault.diskRoot, "skills/hermes-fs-as-cap/SKILL.md"), "# on disk\n");
    await symlink("/etc/passwd", path.join(vault.diskRoot, "symlink-to-outside"));

    expect((await refusal(disk.read("../../../etc/passwd"))).code).toBe("path_escapes");
    expect((await refusal(disk.read("/etc/passwd"))).code).toBe("absolute_path");
    expect(await refusal(disk.read("symlink-to-outside"))).toMatchObject({
      code: "outside_root",
      status: 403,
      message: "resolved outside root",
    });
    const sub = await disk.subdir({ path: "skills" });
    expect(await sub.readText("hermes-fs-as-cap/SKILL.md")).toBe("# on disk\n");
    expect((await refusal(sub.read("../other-skill/SKILL.md"))).code).toBe("path_escapes");
  });

  it.each([
    ["a/../b", "path_escapes"],
    ["..", "path_escapes"],
    ["\\etc\\passwd", "absolute_path"],
    ["C:/Windows/win.ini", "absolute_path"],
    ["~/.ssh/id_rsa", "absolute_path"],
    ["a//b", "invalid_path"],
    ["./a", "invalid_path"],
    ["a\u0000b", "invalid_path"],
    ["", "invalid_path"],
  ])("read(%j) → %s", async (path, code) => {
    expect((await refusal(fs.read(path))).code).toBe(code);
  });

  it("every path-taking method is refused the same way", async () => {
    const sub = await fs.subdir({ path: "skills" });
    expect((await refusal(fs.write("../x", "data"))).code).toBe("path_escapes");
    expect((await refusal(fs.stat("../"))).code).toBe("path_escapes");
    expect((await refusal(fs.listPage(".."))).code).toBe("path_escapes");
    expect((await refusal(fs.delete("/etc/passwd"))).code).toBe("absolute_path");
    expect((await refusal(sub.subdir({ path: "../other-skill" }))).code).toBe("path_escapes");
    expect((await refusal(fs.move("skills/other-skill/SKILL.md", "../stolen"))).code).toBe("path_escapes");
    expect((await refusal(fs.move("/etc/passwd", "mine"))).code).toBe("absolute_path");
    const drain = async () => {
      for await (const _ of sub.list("../")) {
      }
    };
    expect((await refusal(drain())).code).toBe("path_escapes");
  });
});

describe("files", () => {
  it("write, read, readText, stat round-trip with created/replaced and matching etags", async () => {
    const first = await fs.write("notes/a.txt", "hello");
    expect(first).toEqual({ created: true, size: 5, etag: md5("hello"), sha256: sha256("hello") });
    const second = await fs.write("notes/a.txt", "hello, world", { contentType: "text/x-note" });
    expect(second).toEqual({ created: false, size: 12, etag: md5("hello, world"), sha256: sha256("hello, world") });
    expect(await fs.readText("notes/a.txt")).toBe("hello, world");
    expect(await fs.stat("notes/a.txt")).toMatchObject({
      type: "file",
      size: 12,
      etag: second.etag,
      contentType: "text/x-note",
    });
    expect(await fs.stat("notes")).toEqual({ type: "dir" });
    expect(await fs.stat("")).toEqual({ type: "dir" });
  });

  it("binary data, Blob and ReadableStream bodies arrive byte for byte", async () => {
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 7919) % 256);
    await fs.write("bin/a.bin", bytes);
    expect(md5(await fs.read("bin/a.bin"))).toBe(md5(bytes));

    await fs.write("bin/b.bin", new Blob([bytes], { type: "application/x-blob" }));
    expect(md5(await fs.read("bin/b.bin"))).toBe(md5(bytes));
    expect(await fs.stat("bin/b.bin")).toMatchObject({ contentType: "application/x-blob" });

    const chunks = [bytes.subarray(0, 1000), bytes.subarray(1000)];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next) controller.enqueue(next);
        else controller.close();
      },
    });
    expect(await fs.write("bin/c.bin", stream, { length: bytes.length })).toMatchObject({
      created: true,
      size: bytes.length,
    });
    expect(md5(await fs.read("bin/c.bin"))).toBe(md5(bytes));
  });

  it("readStream gives meta; ranges give 206 meta; ifNoneMatch gives null", async () => {
    const { etag } = await fs.write("range.txt", "0123456789", { contentType: "text/plain" });
    const whole = await fs.readStream("range.txt");
    expect(whole.notModified).toBe(false);
    if (whole.notModified) return;
    expect(whole.meta).toMatchObject({ etag, length: 10, range: null });
    expect(whole.meta.contentType).toContain("text/plain");
    expect(Date.parse(whole.meta.modified!)).toBeGreaterThan(0);
    expect(await new Response(whole.body).text()).toBe("0123456789");

    const part = await fs.readStream("range.txt", { range: { start: 2, end: 4 } });
    if (part.notModified) throw new Error("unexpected 304");
    expect(part.meta).toMatchObject({ length: 3, range: { start: 2, end: 4, size: 10 }, etag });
    expect(await new Response(part.body).text()).toBe("234");
    expect(new TextDecoder().decode(await fs.read("range.txt", { range: { start: 7 } }))).toBe("789");

    expect(await fs.read("range.txt", { ifNoneMatch: etag })).toBeNull();
    expect(await fs.readText("range.txt", { ifNoneMatch: md5("other") })).toBe("0123456789");
    expect(await refusal(fs.read("range.txt", { range: { start: 50 } }))).toMatchObject({
      code: "range_not_satisfiable",
      status: 416,
    });
  });

  it("conditional writes: ifNoneMatch * and ifMatch", async () => {
    const { etag } = await fs.write("cond.txt", "v1", { ifNoneMatch: "*" });
    expect(await refusal(fs.write("cond.txt", "v2", { ifNoneMatch: "*" }))).toMatchObject({
      code: "precondition_failed",
      status: 412,
    });
    expect((await refusal(fs.write("cond.txt", "v2", { ifMatch: md5("nope") }))).code).toBe("precondition_failed");
    expect(await fs.readText("cond.txt")).toBe("v1");
    expect(await fs.write("cond.txt", "v2", { ifMatch: etag })).toMatchObject({ created: false });
    expect(await fs.readText("cond.txt")).toBe("v2");
  });

  it("a stream without a length is refused before sending", async () => {
    const stream = new ReadableStream<Uint8Array>({ start: (c) => c.close() });
    expect(await refusal(fs.write("nolength", stream))).toMatchObject({ code: "length_required", status: 0 });
    expect((await refusal(fs.stat("nolength"))).code).toBe("not_found");
  });

  it("delete: a file goes, its folder stays (still a conflict), a missing file is not_found", async () => {
    await fs.write("del/x.txt", "x");
    expect(await refusal(fs.delete("del"))).toMatchObject({ code: "conflict", status: 409 });
    await fs.delete("del/x.txt");
    expect(await refusal(fs.read("del/x.txt"))).toMatchObject({ code: "not_found", status: 404 });
    expect((await refusal(fs.delete("del/x.txt"))).code).toBe("not_found");
    expect(await fs.stat("del")).toEqual({ type: "dir" });
    expect((await refusal(fs.delete("del"))).code).toBe("conflict");
    expect((await refusal(fs.write("del", "x"))).code).toBe("conflict");
  });

  it("file/folder conflicts", async () => {
    await fs.write("conf/file", "f");
    expect((await refusal(fs.write("conf/file/child", "c"))).code).toBe("conflict");
    expect((await refusal(fs.write("conf", "c"))).code).toBe("conflict");
    expect((await refusal(fs.read("conf"))).code).toBe("conflict");
  });

  it("move: renames, refuses an existing destination unless overwrite", async () => {
    await fs.write("mv/a.txt", "A");
    await fs.write("mv/b.txt", "B");
    await fs.move("mv/a.txt", "mv/moved/a.txt");
    expect(await fs.readText("mv/moved/a.txt")).toBe("A");
    expect((await refusal(fs.read("mv/a.txt"))).code).toBe("not_found");

    expect(await refusal(fs.move("mv/moved/a.txt", "mv/b.txt"))).toMatchObject({ code: "conflict", status: 409 });
    expect(await fs.readText("mv/b.txt")).toBe("B");
    await fs.move("mv/moved/a.txt", "mv/b.txt", { overwrite: true });
    expect(await fs.readText("mv/b.txt")).toBe("A");
    expect((await refusal(fs.move("mv/none", "mv/x"))).code).toBe("not_found");
  });
});

describe("listing", () => {
  it("listPage: sorted entries, folders once as dirs, limit and cursor", async () => {
    await fs.write("ls/b.txt", "bb");
    await fs.write("ls/a.txt", "a");
    await fs.write("ls/dir/one", "1");
    await fs.write("ls/dir/two", "2");
    const page = await fs.listPage("ls");
    expect(page.cursor).toBeNull();
    expect(page.entries.map((e) => [e.name, e.type])).toEqual([
      ["a.txt", "file"],
      ["b.txt", "file"],
      ["dir", "dir"],
    ]);
    expect(page.entries[1]).toMatchObject({ size: 2, etag: md5("bb") });

    const first = await fs.listPage("ls", { limit: 2 });
    expect(first.entries.map((e) => e.name)).toEqual(["a.txt", "b.txt"]);
    expect(first.cursor).not.toBeNull();
    const rest = await fs.listPage("ls", { cursor: first.cursor, limit: 2 });
    expect(rest.entries.map((e) => e.name)).toEqual(["dir"]);
    expect(rest.cursor).toBeNull();
    expect((await refusal(fs.listPage("ls", { limit: 0 }))).code).toBe("bad_request");
    expect((await refusal(fs.listPage("ls/a.txt"))).code).toBe("conflict");
  });

  it("the async iterator walks more than 1000 entries across pages", async () => {
    const count = 1005;
    const names = Array.from({ length: count }, (_, i) => `f${String(i).padStart(4, "0")}`);
    // Placed in the disk cap's folder directly: what is under test is the SDK's walk, and
    // 1,005 writes through the API (tested above) would dominate the file's run.
    const fs = new FsCap(vault.diskCapUrl);
    await mkdir(path.join(vault.diskRoot, "many"), { recursive: true });
    await Promise.all(names.map((name) => writeFile(path.join(vault.diskRoot, "many", name), name)));
    const seen: string[] = [];
    for await (const entry of fs.list("many")) seen.push(entry.name);
    expect(seen).toEqual(names);
    // Smaller pages give the same sequence.
    const paged: string[] = [];
    for await (const entry of fs.list("many", { limit: 400 })) paged.push(entry.name);
    expect(paged).toEqual(names);
  }, 60_000);
});

describe("secrecy", () => {
  it("no error seen in this file mentions a token", () => {
    t.expectNoTokenLeaked(30);
  });
});
