/**
 * The HTTP contract of a cap, on R2 and on the real disk host alike: files,
 * stat and list, rights and attenuation, move, errors, strict query
 * decoding. The admin API's: admin-roots.workers.test.ts.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";

let counter = 0;

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function md5Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("MD5", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  const fresh = async (rights?: string[]) =>
    cap((await mintRoot(`contract/${++counter}/`, { backend, ...(rights ? { rights } : {}) })).token);

  describe("the hermes-fs-as-cap test vector", () => {
    it("refuses escapes and absolute paths, and a subdir reads only its subtree", async () => {
      const fs = await fresh();
      await fs.write("skills/hermes-fs-as-cap/SKILL.md", "# skill");
      await fs.write("skills/other-skill/SKILL.md", "# other");
      const escaping = await fs.read("../../../etc/passwd");
      expect(escaping.status).toBe(400);
      expect(await escaping.json()).toEqual({ error: { code: "path_escapes", message: "path escapes" } });
      const absolute = await fs.read("/etc/passwd");
      expect(absolute.status).toBe(400);
      expect(await absolute.json()).toEqual({ error: { code: "absolute_path", message: "absolute paths forbidden" } });
      const sub = await child(fs, { path: "skills" });
      expect(await (await sub.read("hermes-fs-as-cap/SKILL.md")).text()).toBe("# skill");
      expect(await errorCode(await sub.read("../other-skill/SKILL.md"))).toBe("path_escapes");
    });
  });

  describe("files", () => {
    it("writes with 201 then 200, reads bytes back with headers", async () => {
      const fs = await fresh();
      const first = await fs.write("a/b.txt", "hello", { "content-type": "text/plain; charset=utf-8" });
      expect(first.status).toBe(201);
      expect(await first.json()).toEqual({ size: 5, etag: await md5Hex("hello"), sha256: await sha256Hex("hello") });
      const second = await fs.write("a/b.txt", "hello world", { "content-type": "text/markdown" });
      expect(second.status).toBe(200);
      const res = await fs.read("a/b.txt");
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("hello world");
      expect(res.headers.get("etag")).toBe(`"${await md5Hex("hello world")}"`);
      expect(res.headers.get("content-length")).toBe("11");
      expect(res.headers.get("content-type")).toBe("text/markdown");
      expect(new Date(res.headers.get("last-modified")!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    });

    it("round-trips binary bytes exactly", async () => {
      const fs = await fresh();
      const bytes = Uint8Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251);
      expect((await fs.write("bin", bytes)).status).toBe(201);
      expect(new Uint8Array(await (await fs.read("bin")).arrayBuffer())).toEqual(bytes);
      // Empty files too (R2 reads no stream for them: this once hung).
      expect((await fs.write("empty", "")).status).toBe(201);
      expect((await fs.write("empty", "", { "if-none-match": "*" })).status).toBe(412);
      const empty = await fs.read("empty");
      expect(empty.headers.get("content-length")).toBe("0");
      expect(await empty.text()).toBe("");
      expect((await fs.move({ from: "empty", to: "moved-empty" })).status).toBe(200);
      expect(await (await fs.read("moved-empty")).text()).toBe("");
    });

    it("stores names exactly as given", async () => {
      const fs = await fresh();
      await fs.write("\u00e9", "composed");
      await fs.write("e\u0301", "decomposed");
      await fs.write("%2e%2e", "literal percent");
      expect(await (await fs.read("\u00e9")).text()).toBe("composed");
      expect(await (await fs.read("e\u0301")).text()).toBe("decomposed");
      expect(await (await fs.read("%2e%2e")).text()).toBe("literal percent");
    });

    it("honours If-Match and If-None-Match on writes, writing nothing on 412", async () => {
      const fs = await fresh();
      const { etag } = (await (await fs.write("f", "v1")).json()) as { etag: string };
      expect(await errorCode(await fs.write("f", "v2", { "if-none-match": "*" }))).toBe("precondition_failed");
      expect(await errorCode(await fs.write("f", "v2", { "if-match": '"0123"' }))).toBe("precondition_failed");
      expect(await (await fs.read("f")).text()).toBe("v1");
      expect((await fs.write("f", "v2", { "if-match": `"${etag}"` })).status).toBe(200);
      expect((await fs.write("g", "new", { "if-none-match": "*" })).status).toBe(201);
      expect(await errorCode(await fs.write("missing", "x", { "if-match": `"${etag}"` }))).toBe("precondition_failed");
      expect((await fs.read("missing")).status).toBe(404);
    });

    it("serves ranges, 416 and 304", async () => {
      const fs = await fresh();
      await fs.write("r", "0123456789");
      const part = await fs.read("r", { range: "bytes=2-5" });
      expect(part.status).toBe(206);
      expect(part.headers.get("content-range")).toBe("bytes 2-5/10");
      expect(await part.text()).toBe("2345");
      const suffix = await fs.read("r", { range: "bytes=-3" });
      expect(await suffix.text()).toBe("789");
      const open = await fs.read("r", { range: "bytes=7-" });
      expect(await open.text()).toBe("789");
      const beyond = await fs.read("r", { range: "bytes=10-20" });
      expect(beyond.status).toBe(416);
      expect(beyond.headers.get("content-range")).toBe("bytes */10");
      expect(await errorCode(beyond)).toBe("range_not_satisfiable");
      const etag = (await fs.read("r")).headers.get("etag")!;
      const cached = await fs.read("r", { "if-none-match": etag });
      expect(cached.status).toBe(304);
      expect((await fs.read("r", { "if-none-match": '"other"' })).status).toBe(200);
    });

    it("deletes files, not directories; the emptied folder stays until removed", async () => {
      const fs = await fresh();
      await fs.write("d/x", "1");
      expect(await errorCode(await fs.remove("d"))).toBe("conflict");
      expect(await errorCode(await fs.removeFolder("d"))).toBe("conflict");
      expect((await fs.remove("d/x")).status).toBe(204);
      expect(await errorCode(await fs.remove("d/x"))).toBe("not_found");
      expect(await (await fs.stat("d")).json()).toEqual({ type: "dir" });
      expect(await errorCode(await fs.remove("d"))).toBe("conflict");
      expect(await errorCode(await fs.write("d", "x"))).toBe("conflict");
      expect((await fs.removeFolder("d")).status).toBe(204);
      expect(await errorCode(await fs.stat("d"))).toBe("not_found");
      expect(await errorCode(await fs.removeFolder("d"))).toBe("not_found");
    });

    it("refuses a file where a directory is, and the reverse", async () => {
      const fs = await fresh();
      await fs.write("a", "file");
      expect(await errorCode(await fs.write("a/b", "x"))).toBe("conflict");
      await fs.write("dir/inner", "x");
      expect(await errorCode(await fs.write("dir", "x"))).toBe("conflict");
      expect(await errorCode(await fs.read("dir"))).toBe("conflict");
      expect(await errorCode(await fs.list("a"))).toBe("conflict");
      expect(await errorCode(await fs.subdir({ path: "a" }))).toBe("conflict");
    });

    it("needs a file name for file operations", async () => {
      const fs = await fresh();
      for (const res of [await fs.read(""), await fs.write("", "x"), await fs.remove("")]) {
        expect(await errorCode(res)).toBe("invalid_path");
      }
    });

    it("enforces the size limit (unknown lengths: see the launcher tests)", async () => {
      const fs = await fresh();

      // The workers test config caps files at 1 MiB.
      const huge = await fs.write("h", new Uint8Array(1024 * 1024 + 1));
      expect(huge.status).toBe(413);
      expect(await errorCode(huge)).toBe("too_large");
      expect((await fs.write("h2", new Uint8Array(1024 * 1024))).status).toBe(201);
      expect((await fs.read("h")).status).toBe(404);
    });
  });

  describe("stat and list", () => {
    it("stats files, directories and the root", async () => {
      const fs = await fresh();
      await fs.write("d/f.txt", "abc", { "content-type": "text/plain" });
      expect(await (await fs.stat("")).json()).toEqual({ type: "dir" });
      expect(await (await fs.stat("d")).json()).toEqual({ type: "dir" });
      const file = (await (await fs.stat("d/f.txt")).json()) as Record<string, unknown>;
      expect(file).toMatchObject({ type: "file", size: 3, etag: await md5Hex("abc"), contentType: "text/plain" });
      expect(typeof file.modified).toBe("string");
      expect(await errorCode(await fs.stat("nope"))).toBe("not_found");
    });

    it("lists direct children sorted, directories once", async () => {
      const fs = await fresh();
      for (const p of ["b.txt", "a/1", "a/2", "a/sub/3", "c/x", "B", "😀", "é"]) await fs.write(p, p);
      const body = (await (await fs.list("")).json()) as { entries: { name: string; type: string }[]; cursor: null };
      expect(body.entries.map((e) => `${e.type}:${e.name}`)).toEqual([
        "file:B",
        "dir:a",
        "file:b.txt",
        "dir:c",
        "file:é",
        "file:😀",
      ]);
      expect(body.cursor).toBeNull();
      const inner = (await (await fs.list("a")).json()) as { entries: { name: string; type: string; size?: number }[] };
      expect(inner.entries).toMatchObject([
        { name: "1", type: "file", size: 3 },
        { name: "2", type: "file" },
        { name: "sub", type: "dir" },
      ]);
      expect(await errorCode(await fs.list("missing"))).toBe("not_found");
    });

    it("paginates 1,200 files with cursors, each name once", async () => {
      const fs = await fresh();
      // Disk at scale (hundreds of files through the launcher): test/node/disk-crash.node.test.ts.
      // Here each disk write costs ~100 ms in the test pool, so a few pages' worth.
      const total = backend === "r2" ? 1200 : 120;
      const names = Array.from({ length: total }, (_, i) => `f${String(i).padStart(5, "0")}`);
      if (backend === "r2") {
        // Seeded straight into the bucket under this root's prefix: the API's
        // write path is tested elsewhere, and 1,200 API writes would dominate the run.
        for (let i = 0; i < names.length; i += 250) {
          await Promise.all(names.slice(i, i + 250).map((n) => env.BUCKET.put(`contract/${counter}/many/${n}`, "x")));
        }
      } else {
        for (let i = 0; i < names.length; i += 40) {
          const statuses = await Promise.all(
            names.slice(i, i + 40).map(async (n) => (await fs.write(`many/${n}`, "x")).status),
          );
          expect(statuses.filter((s) => s !== 201)).toEqual([]);
        }
      }
      await fs.write("many/zdir/inner", "x");
      const limit = backend === "r2" ? 400 : 40;
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res = await fs.list("many", `&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
        const page = (await res.json()) as { entries: { name: string }[]; cursor: string | null };
        expect(page.entries.length).toBeLessThanOrEqual(limit);
        seen.push(...page.entries.map((e) => e.name));
        cursor = page.cursor;
        pages++;
      } while (cursor);
      expect(pages).toBe(4);
      expect(seen).toEqual([...names, "zdir"]);
      if (backend === "r2") {
        const first = (await (await fs.list("many")).json()) as { entries: unknown[]; cursor: string };
        expect(first.entries.length).toBe(1000);
      }
    }, 120_000);

    it("refuses bad limits and forged cursors", async () => {
      const fs = await fresh();
      for (const extra of ["&limit=0", "&limit=1001", "&limit=abc", "&limit=-1", "&cursor=%2F%2F", "&cursor=Li4"]) {
        expect(await errorCode(await fs.list("", extra))).toBe("bad_request");
      }
    });
  });

  describe("rights and attenuation", () => {
    it("a read-only cap cannot write, delete or mint a writer", async () => {
      const fs = await fresh();
      await fs.write("f", "x");
      const ro = await child(fs, { path: "", rights: ["read", "list", "subdir"] });
      expect(await (await ro.read("f")).text()).toBe("x");
      expect(await errorCode(await ro.write("f", "y"))).toBe("forbidden");
      expect(await errorCode(await ro.remove("f"))).toBe("forbidden");
      expect(await errorCode(await ro.move({ from: "f", to: "g" }))).toBe("forbidden");
      expect(await errorCode(await ro.subdir({ path: "", rights: ["read", "write"] }))).toBe("forbidden");
      expect(await (await fs.read("f")).text()).toBe("x");
      const narrower = await child(ro, { path: "", rights: ["read"] });
      expect(narrower.minted.rights).toEqual(["read"]);
      expect(await errorCode(await narrower.subdir({ path: "" }))).toBe("forbidden");
      expect(await errorCode(await narrower.list())).toBe("forbidden");
      expect((await narrower.stat("f")).status).toBe(200);
    });

    it("rights never grow and expiry never extends through any chain", async () => {
      const fs = await fresh();
      const a = await child(fs, { path: "x", rights: ["read", "write", "subdir"], ttlSeconds: 3600 });
      const b = await child(a, { path: "y", ttlSeconds: 7200 });
      expect(b.minted.rights).toEqual(["read", "write", "subdir"]);
      expect(Date.parse(b.minted.expiresAt!)).toBeLessThanOrEqual(Date.parse(a.minted.expiresAt!));
      const c = await child(b, { path: "" });
      expect(Date.parse(c.minted.expiresAt!)).toBeLessThanOrEqual(Date.parse(a.minted.expiresAt!));
      expect(await errorCode(await b.subdir({ path: "", rights: ["delete"] }))).toBe("forbidden");
      const info = (await (await b.info()).json()) as Record<string, unknown>;
      expect(info).toMatchObject({ id: b.minted.id, rights: ["read", "write", "subdir"], parent: a.minted.id });
    });

    it("a subdir path is judged by the same parser", async () => {
      const fs = await fresh();
      expect(await errorCode(await fs.subdir({ path: "../x" }))).toBe("path_escapes");
      expect(await errorCode(await fs.subdir({ path: "/x" }))).toBe("absolute_path");
      expect(await errorCode(await fs.subdir({ path: "a//b" }))).toBe("invalid_path");
    });

    it("refuses malformed mint requests and mints nothing", async () => {
      const fs = await fresh();
      const bodies: unknown[] = [
        { path: "x", right: ["read"] },
        { path: 3 },
        { path: "x", rights: ["read", "admin"] },
        { path: "x", rights: "read" },
        { path: "x", ttlSeconds: 0 },
        { path: "x", ttlSeconds: 1.5 },
        { path: "x", label: "a\nb" },
        [],
      ];
      for (const json of bodies)
        expect(await errorCode(await fs.subdir(json as Record<string, unknown>))).toBe("bad_request");
      const bad = await call("POST", `/object/${fs.token}/subdir`, {
        body: "{nope",
        headers: { "content-type": "application/json" },
      });
      expect(await errorCode(bad)).toBe("bad_request");
      expect(((await (await fs.children()).json()) as { children: unknown[] }).children).toEqual([]);
    });
  });

  describe("move", () => {
    it("moves files, refuses to clobber unless asked, keeps the source on refusal", async () => {
      const fs = await fresh();
      await fs.write("a", "A");
      await fs.write("b", "B");
      expect(await errorCode(await fs.move({ from: "a", to: "b" }))).toBe("conflict");
      expect(await (await fs.read("a")).text()).toBe("A");
      expect((await fs.move({ from: "a", to: "b", overwrite: true })).status).toBe(200);
      expect(await (await fs.read("b")).text()).toBe("A");
      expect((await fs.read("a")).status).toBe(404);
      expect((await fs.move({ from: "b", to: "deep/c" })).status).toBe(200);
      expect(await errorCode(await fs.move({ from: "deep/c", to: "../c" }))).toBe("path_escapes");
      expect(await errorCode(await fs.move({ from: "missing", to: "x" }))).toBe("not_found");
      // A folder moves whole (issue 24), but never into itself.
      expect(await errorCode(await fs.move({ from: "deep", to: "deep/inner" }))).toBe("conflict");
      expect(await (await fs.read("deep/c")).text()).toBe("A");
      expect((await fs.move({ from: "deep", to: "x" })).status).toBe(200);
      expect(await (await fs.read("x/c")).text()).toBe("A");
      expect((await fs.read("deep/c")).status).toBe(404);
    });
  });

  describe("errors", () => {
    it("answers unknown routes and methods with JSON, never 5xx", async () => {
      const fs = await fresh();
      for (const [method, path] of [
        ["GET", "/nope"],
        ["POST", `/object/${fs.token}/file?path=a`],
        ["PATCH", `/object/${fs.token}`],
      ] as const) {
        const res = await call(method, path);
        expect(res.status).toBeLessThan(500);
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(await errorCode(res)).toMatch(/^[a-z_]+$/);
      }
    });

    it.runIf(backend === "r2")("touches storage only for accepted paths", async () => {
      const fs = await fresh();
      const before = await env.BUCKET.list({ prefix: `contract/${counter}/` });
      for (const p of ["../x", "/x", "a/../b", "a//b", "a\\b", "~/x", ".capvault-tmp-1", "C:x", "a\u0000"]) {
        expect((await fs.write(p, "x")).status).toBe(400);
      }
      const after = await env.BUCKET.list({ prefix: `contract/${counter}/` });
      expect(after.objects.length).toBe(before.objects.length);
    });
  });
});

describe("query decoding", () => {
  it("is strict: bad escapes and repeated parameters are refused", async () => {
    const fs = cap((await mintRoot("contract/strict-query/")).token);
    await fs.write("%FF", "literal");
    const get = (query: string) => call("GET", `/object/${fs.token}/file?${query}`);
    expect(await errorCode(await get("path=%FF"))).toBe("invalid_path");
    expect(await errorCode(await get("path=a%ED%A0%80b"))).toBe("invalid_path");
    expect(await errorCode(await get("path=x&path=../y"))).toBe("bad_request");
    expect(await (await get("path=%25FF")).text()).toBe("literal");
    expect(await errorCode(await call("PUT", `/object/${fs.token}/file?path=%C0%AE%C0%AE/x`, { body: "x" }))).toBe(
      "invalid_path",
    );
  });
});
