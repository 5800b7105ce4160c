/**
 * The SDK against the real launcher (Miniflare): every method, the hostile
 * paths of the hermes-fs-as-cap test vector arriving at the server as typed CapErrors, pagination, and
 * the cap token never appearing in an error.
 */
import { createHash } from "node:crypto";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { inspect } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminClient, CapError, FsCap } from "../../clients/typescript/index.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;
let fs: FsCap;
/** Every CapError any test saw, checked at the end for leaked tokens. */
const seenErrors: CapError[] = [];
const md5 = (data: Uint8Array | string) => createHash("md5").update(data).digest("hex");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");
const token = (cap: FsCap) => cap.url.slice(cap.url.lastIndexOf("/") + 1);

/** Awaits a call that must be refused and returns the CapError. */
async function refusal(promise: Promise<unknown>): Promise<CapError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a CapError, but the call succeeded");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CapError);
  seenErrors.push(error as CapError);
  return error as CapError;
}

beforeAll(async () => {
  vault = await startTestVault();
  // Each test file gets a fresh state, but keep tests independent of the default root's contents.
  const admin = new AdminClient(vault.url, vault.adminToken);
  fs = await admin.mintRoot({ backend: "r2", prefix: "sdk-test/", label: "sdk" });
});

afterAll(async () => {
  await vault?.stop();
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

describe("caps", () => {
  it("info describes the cap and makes String() show the id, never the token", async () => {
    expect(String(fs)).not.toContain(token(fs));
    const info = await fs.info();
    expect(info).toMatchObject({
      rights: ["read", "write", "delete", "list", "subdir"],
      label: "sdk",
      parent: null,
      expiresAt: null,
    });
    expect(typeof info.id).toBe("string");
    expect(Date.parse(info.createdAt)).toBeGreaterThan(0);
    expect(String(fs)).toBe(`FsCap(${info.id})`);
    expect(`${JSON.stringify(fs)} ${inspect(fs)}`).not.toContain(token(fs));
  });

  it("subdir attenuates: fewer rights, bounded expiry, refused escalation", async () => {
    await fs.write("shared/doc.md", "doc");
    const reader = await fs.subdir({ path: "shared", rights: ["read", "list"], ttlSeconds: 600, label: "reader" });
    expect(reader.rights).toEqual(["read", "list"]);
    expect(Date.parse(reader.expiresAt!)).toBeGreaterThan(Date.now());
    expect(reader.url).not.toBe(fs.url);
    expect(await reader.readText("doc.md")).toBe("doc");
    expect(await reader.info()).toMatchObject({
      id: reader.id,
      rights: ["read", "list"],
      label: "reader",
      parent: (await fs.info()).id,
    });

    expect(await refusal(reader.write("doc.md", "pwned"))).toMatchObject({ code: "forbidden", status: 403 });
    expect((await refusal(reader.delete("doc.md"))).code).toBe("forbidden");
    expect((await refusal(reader.subdir({ path: "" }))).code).toBe("forbidden");
    expect((await refusal(fs.subdir({ path: "shared", rights: ["read", "fly" as never] }))).code).toBe("bad_request");

    const narrow = await fs.subdir({ path: "", rights: ["read", "subdir"] });
    expect((await refusal(narrow.subdir({ path: "shared", rights: ["read", "write"] }))).code).toBe("forbidden");
    expect(await fs.readText("shared/doc.md")).toBe("doc");
  });

  it("children follows pages in creation order; childrenPage hands out one page", async () => {
    const parent = await fs.subdir({ path: "", label: "pager" });
    const kids: string[] = [];
    for (let i = 0; i < 5; i++) kids.push((await parent.subdir({ path: "", label: `kid${i}` })).id!);
    expect((await parent.children({ limit: 2 })).map((c) => c.id)).toEqual(kids);
    const first = await parent.childrenPage({ limit: 2 });
    expect(first.children.map((c) => c.id)).toEqual(kids.slice(0, 2));
    const second = await parent.childrenPage({ limit: 2, cursor: first.cursor });
    expect(second.children.map((c) => c.id)).toEqual(kids.slice(2, 4));
    expect((await parent.childrenPage({ limit: 2, cursor: second.cursor })).cursor).toBeNull();
    expect((await refusal(parent.childrenPage({ limit: 0 }))).code).toBe("bad_request");
  });

  it("children, revokeChild and revoke", async () => {
    const parent = await fs.subdir({ path: "family", label: "parent" });
    const a = await parent.subdir({ path: "a", rights: ["read"], label: "child-a" });
    const b = await parent.subdir({ path: "b", label: "child-b" });
    const grandchild = await b.subdir({ path: "deeper" });

    const children = await parent.children();
    expect(children.map((c) => [c.id, c.path, c.label, c.rights]).sort()).toEqual(
      [
        [a.id, "a", "child-a", ["read"]],
        [b.id, "b", "child-b", ["read", "write", "delete", "list", "subdir"]],
      ].sort(),
    );

    await parent.revokeChild(b.id!);
    expect(await refusal(b.info())).toMatchObject({ code: "no_such_cap", status: 404 });
    expect((await refusal(grandchild.stat())).code).toBe("no_such_cap");
    expect((await a.info()).id).toBe(a.id);
    expect((await parent.children()).map((c) => c.id)).toEqual([a.id]);

    expect(await parent.revoke()).toEqual({ complete: true });
    expect((await refusal(parent.info())).code).toBe("no_such_cap");
    expect((await refusal(a.read("x"))).code).toBe("no_such_cap");
    expect((await fs.info()).label).toBe("sdk");
  });

  it("a revoked cap and a never-issued one are indistinguishable", async () => {
    const gone = await fs.subdir({ path: "gone" });
    await gone.revoke();
    const never = new FsCap(`${vault.url}/object/${"a".repeat(48)}`);
    const [e1, e2] = [await refusal(gone.info()), await refusal(never.info())];
    expect([e1.code, e1.status, e1.message]).toEqual([e2.code, e2.status, e2.message]);
  });
});

describe("admin", () => {
  it("mints, lists and revokes roots; a wrong admin token is unauthorized", async () => {
    const admin = new AdminClient(`${vault.url}/`, vault.adminToken);
    const root = await admin.mintRoot({
      backend: "r2",
      prefix: "admin-test/",
      rights: ["read", "list"],
      label: "ro",
      ttlSeconds: 3600,
    });
    expect(root.rights).toEqual(["read", "list"]);
    expect(await root.info()).toMatchObject({ label: "ro", rights: ["read", "list"] });
    const roots = await admin.listRoots();
    expect(roots.find((r) => r.id === root.id)).toMatchObject({ backend: "r2", prefix: "admin-test/", label: "ro" });

    expect(await admin.revokeRoot(root.id!)).toEqual({ complete: true });
    expect((await refusal(root.info())).code).toBe("no_such_cap");

    const intruder = new AdminClient(vault.url, "wrong-token");
    expect(await refusal(intruder.listRoots())).toMatchObject({ code: "unauthorized", status: 401 });
    expect((await refusal(intruder.mintRoot({ backend: "r2", prefix: "x/" }))).code).toBe("unauthorized");
    expect((await refusal(admin.mintRoot({ backend: "r2", prefix: "/abs" }))).code).toBe("absolute_path");
  });
});

describe("watch", () => {
  /** The newest version id of the root so far: a watch from it sees exactly what comes after. */
  async function newestVersion(): Promise<string> {
    await fs.write("watch-marker.md", String(Math.random()));
    return (await fs.versions("watch-marker.md", { limit: 1 })).versions[0]!.id;
  }

  it("follows a child's subtree in order, paths relative to it, and ends with no_such_cap on revocation", async () => {
    const child = await fs.subdir({ path: "watched", rights: ["read"] });
    const since = await newestVersion();
    await fs.write("outside.md", "not for the child");
    await fs.write("watched/a.md", "one");
    await fs.write("watched/a.md", "two!");
    await fs.move("watched/a.md", "watched/deep/b.md");
    await fs.delete("watched/deep/b.md");
    const changes = child.watch({ since })[Symbol.asyncIterator]();
    const seen = [];
    for (let i = 0; i < 5; i++) seen.push((await changes.next()).value);
    expect(seen.map((c) => [c.operation, c.path, c.size])).toEqual([
      ["created", "a.md", 3],
      ["modified", "a.md", 4],
      ["moved", "a.md", 4],
      ["created", "deep/b.md", 4],
      ["deleted", "deep/b.md", 4],
    ]);
    expect(seen[0]).toMatchObject({ sha256: sha256("one"), actor: fs.id });
    expect(Number(seen[4].version)).toBeGreaterThan(Number(seen[0].version));

    // Live: a change made after the backlog arrives on the open stream.
    const next = changes.next();
    await fs.write("watched/live.md", "now");
    expect((await next).value).toMatchObject({ operation: "created", path: "live.md" });

    const ended = changes.next();
    await child.revoke();
    expect(await refusal(ended)).toMatchObject({ code: "no_such_cap", status: 404 });
  });

  it("resumes after `since`, never repeating what was seen, and ends quietly on abort", async () => {
    const since = await newestVersion();
    await fs.write("resume/a.md", "1");
    await fs.write("resume/b.md", "2");
    const stop = new AbortController();
    const first = fs.watch({ since, signal: stop.signal })[Symbol.asyncIterator]();
    const a = (await first.next()).value;
    expect(a.path).toBe("resume/a.md");
    stop.abort();
    expect(await first.next()).toEqual({ done: true, value: undefined });

    const again = new AbortController();
    const rest = fs.watch({ since: a.version, signal: again.signal })[Symbol.asyncIterator]();
    expect((await rest.next()).value).toMatchObject({ path: "resume/b.md", operation: "created" });
    const pending = rest.next();
    again.abort();
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it("a cap without read, a bad since and a revoked cap are refused before any event", async () => {
    const writeOnly = await fs.subdir({ path: "", rights: ["write"] });
    expect(await refusal(writeOnly.watch().next())).toMatchObject({ code: "forbidden" });
    expect(await refusal(fs.watch({ since: "x" }).next())).toMatchObject({ code: "bad_request" });
    await writeOnly.revoke();
    expect(await refusal(writeOnly.watch().next())).toMatchObject({ code: "no_such_cap" });
  });
});

describe("secrecy", () => {
  it("an unreachable vault is unavailable (status 0), token-free", async () => {
    const offline = new FsCap(`http://127.0.0.1:9/object/${token(fs)}`);
    expect(await refusal(offline.read("a"))).toMatchObject({ code: "unavailable", status: 0 });
  });

  it("no error seen in this file mentions a token", () => {
    expect(seenErrors.length).toBeGreaterThan(40);
    const secrets = [token(fs), vault.adminToken];
    for (const error of seenErrors) {
      // Any 32-character base32 run would be a token (ids are 16 characters).
      expect(error.message).not.toMatch(/[a-z2-7]{32}/);
      for (const secret of secrets) {
        expect(error.message).not.toContain(secret);
        expect(inspect(error)).not.toContain(secret);
        expect(JSON.stringify(error)).not.toContain(secret);
      }
    }
  });
});
