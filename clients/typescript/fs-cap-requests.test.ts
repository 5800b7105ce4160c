import { describe, expect, it } from "vitest";
import { CAP_URL, fakeVault, json, TOKEN } from "../../test/fake-vault.ts";
import { AdminClient, FsCap } from "./index.ts";

describe("ids in URL paths cannot be turned into other routes", () => {
  it.each(["..", ".", "%2e%2e", ".%2E", "a/b", "a?x", ""])(
    "revokeChild(%j) is refused locally and sends nothing",
    async (id) => {
      const { fetch, sent } = fakeVault(() => new Response(null, { status: 204 }));
      // Without the check, ".." would resolve to DELETE /object/<token>: revoking the caller itself.
      await expect(new FsCap(CAP_URL, { fetch }).revokeChild(id)).rejects.toMatchObject({
        code: "bad_request",
        status: 0,
      });
      expect(sent).toHaveLength(0);
    },
  );

  it("revokeRoot checks ids the same way", async () => {
    const { fetch, sent } = fakeVault(() => new Response(null, { status: 204 }));
    await expect(new AdminClient("http://vault.test", "t", { fetch }).revokeRoot("../roots")).rejects.toMatchObject({
      code: "bad_request",
    });
    expect(sent).toHaveLength(0);
  });
});

describe("request details", () => {
  it("write: created vs replaced, content type, conditional headers quoted", async () => {
    let status = 201;
    const { fetch, sent } = fakeVault(() => json(status, { size: 5, etag: "abc" }));
    const fs = new FsCap(CAP_URL, { fetch });
    expect(await fs.write("a.txt", "hello")).toEqual({ created: true, size: 5, etag: "abc" });
    status = 200;
    expect(
      await fs.write("a.txt", new Uint8Array([1, 2]), { ifMatch: "abc", contentType: "application/x-test" }),
    ).toEqual({
      created: false,
      size: 5,
      etag: "abc",
    });
    await fs.write("a.txt", new Blob(["x"], { type: "image/png" }), { ifNoneMatch: "*" });
    await fs.write("a.txt", new Uint8Array([9]), { ifMatch: '"already-quoted"' });

    expect(sent[0]!.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(sent[0]!.body).toBe("hello");
    expect(sent[1]!.headers.get("content-type")).toBe("application/x-test");
    expect(sent[1]!.headers.get("if-match")).toBe('"abc"');
    expect(sent[2]!.headers.get("content-type")).toBe("image/png");
    expect(sent[2]!.headers.get("if-none-match")).toBe("*");
    expect(sent[3]!.headers.get("if-match")).toBe('"already-quoted"');
  });

  it("read: range header, 206 meta, 304 → null", async () => {
    let mode: "range" | "304" = "range";
    const { fetch, sent } = fakeVault(() =>
      mode === "range"
        ? new Response("bcd", {
            status: 206,
            headers: {
              etag: '"e1"',
              "content-range": "bytes 1-3/10",
              "last-modified": "Wed, 01 Jan 2025 00:00:00 GMT",
            },
          })
        : new Response(null, { status: 304, headers: { etag: '"e1"' } }),
    );
    const fs = new FsCap(CAP_URL, { fetch });
    const stream = await fs.readStream("a", { range: { start: 1, end: 3 } });
    expect(sent[0]!.headers.get("range")).toBe("bytes=1-3");
    expect(stream.notModified).toBe(false);
    expect(stream.meta).toMatchObject({
      etag: "e1",
      range: { start: 1, end: 3, size: 10 },
      modified: "2025-01-01T00:00:00.000Z",
    });
    if (!stream.notModified) expect(await new Response(stream.body).text()).toBe("bcd");
    await fs.read("a", { range: { start: 5 } });
    expect(sent[1]!.headers.get("range")).toBe("bytes=5-");
    mode = "304";
    expect(await fs.read("a", { ifNoneMatch: "e1" })).toBeNull();
    expect(sent[2]!.headers.get("if-none-match")).toBe('"e1"');
    await expect(fs.read("a", { range: { start: 4, end: 2 } })).rejects.toBeInstanceOf(RangeError);
  });

  it("listRoots follows the roots' pages to the end and stops on a repeated cursor", async () => {
    const root = (id: string) => ({
      id,
      label: null,
      backend: "r2",
      prefix: `${id}/`,
      rights: ["read"],
      createdAt: "",
      expiresAt: null,
    });
    const pages: Record<string, unknown> = {
      "": { roots: [root("a")], cursor: "c1" },
      c1: { roots: [], cursor: "c2" },
      c2: { roots: [root("b")], cursor: null },
    };
    const { fetch, sent } = fakeVault((s) => json(200, pages[s.url.searchParams.get("cursor") ?? ""]));
    const admin = new AdminClient("http://vault.test", "adm", { fetch });
    expect((await admin.listRoots()).map((r) => r.id)).toEqual(["a", "b"]);
    expect(sent.map((s) => s.url.searchParams.get("cursor"))).toEqual([null, "c1", "c2"]);
    // An async iterable too, as list() and children() are.
    const iterated: string[] = [];
    for await (const r of admin.listRoots()) iterated.push(r.id);
    expect(iterated).toEqual(["a", "b"]);
    const stuck = fakeVault(() => json(200, { roots: [], cursor: "same" }));
    await expect(new AdminClient("http://vault.test", "adm", { fetch: stuck.fetch }).listRoots()).rejects.toMatchObject(
      {
        code: "unavailable",
      },
    );
    expect(stuck.sent).toHaveLength(2);
  });

  it("list follows cursors to the end and stops on a repeated cursor", async () => {
    const pages: Record<string, unknown> = {
      "": { entries: [{ name: "a", type: "file" }], cursor: "c1" },
      c1: { entries: [{ name: "b", type: "dir" }], cursor: "c2" },
      c2: { entries: [{ name: "c", type: "file" }], cursor: null },
    };
    const { fetch, sent } = fakeVault((s) => json(200, pages[s.url.searchParams.get("cursor") ?? ""]));
    const names: string[] = [];
    for await (const e of new FsCap(CAP_URL, { fetch }).list("dir", { limit: 1 })) names.push(e.name);
    expect(names).toEqual(["a", "b", "c"]);
    expect(
      sent.map((s) => [
        s.url.searchParams.get("cursor"),
        s.url.searchParams.get("limit"),
        s.url.searchParams.get("path"),
      ]),
    ).toEqual([
      [null, "1", "dir"],
      ["c1", "1", "dir"],
      ["c2", "1", "dir"],
    ]);

    const stuck = fakeVault(() => json(200, { entries: [], cursor: "same" }));
    const loop = async () => {
      for await (const _ of new FsCap(CAP_URL, { fetch: stuck.fetch }).list()) {
      }
    };
    await expect(loop()).rejects.toMatchObject({ code: "unavailable" });
    expect(stuck.sent.length).toBe(2);
  });

  it("subdir returns a cap on the same mount that knows its id, rights and expiry", async () => {
    const child = "c".repeat(32);
    const { fetch, sent } = fakeVault((s) =>
      s.url.pathname.endsWith("/subdir")
        ? json(201, {
            token: child,
            url: `http://public.example/object/${child}`,
            id: "kid",
            rights: ["read", "list"],
            expiresAt: "2030-01-01T00:00:00.000Z",
          })
        : json(200, { type: "dir" }),
    );
    const sub = await new FsCap(`http://127.0.0.1:9/base/object/${TOKEN}`, { fetch }).subdir({
      path: "skills",
      rights: ["read", "list"],
      ttlSeconds: 60,
      label: "l",
    });
    expect(JSON.parse(sent[0]!.body!)).toEqual({
      path: "skills",
      rights: ["read", "list"],
      ttlSeconds: 60,
      label: "l",
    });
    expect(sub.url).toBe(`http://127.0.0.1:9/base/object/${child}`);
    expect({ id: sub.id, rights: sub.rights, expiresAt: sub.expiresAt }).toEqual({
      id: "kid",
      rights: ["read", "list"],
      expiresAt: "2030-01-01T00:00:00.000Z",
    });
    expect(String(sub)).toBe("FsCap(kid)");
    await sub.stat();
    expect(sent[1]!.url.pathname).toBe(`/base/object/${child}/stat`);
  });

  it("revoke reports a pending cascade (202) as incomplete", async () => {
    const { fetch } = fakeVault(() => json(202, { pending: 3 }));
    expect(await new FsCap(CAP_URL, { fetch }).revoke()).toEqual({ complete: false, detail: { pending: 3 } });
    const done = fakeVault(() => new Response(null, { status: 204 }));
    expect(await new FsCap(CAP_URL, { fetch: done.fetch }).revoke()).toEqual({ complete: true });
    expect(done.sent[0]!.method).toBe("DELETE");
    expect(done.sent[0]!.url.pathname).toBe(`/object/${TOKEN}`);
  });

  it("admin calls carry the bearer token and the mint body", async () => {
    const { fetch, sent } = fakeVault(() =>
      json(201, { token: TOKEN, url: "u", id: "rid", rights: ["read"], expiresAt: null }),
    );
    const cap = await new AdminClient("http://vault.test:8787/", "adm", { fetch }).mintRoot({
      backend: "r2",
      prefix: "t/",
      rights: ["read"],
    });
    expect(sent[0]!.url.href).toBe("http://vault.test:8787/admin/roots");
    expect(sent[0]!.headers.get("authorization")).toBe("Bearer adm");
    expect(JSON.parse(sent[0]!.body!)).toEqual({ backend: "r2", prefix: "t/", rights: ["read"] });
    expect(cap.url).toBe(CAP_URL);
    expect(cap.id).toBe("rid");
  });
});
