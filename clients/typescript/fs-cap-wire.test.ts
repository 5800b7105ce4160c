/**
 * The SDK's side of the wire, without a server: what each call sends, and how
 * it turns every kind of answer into a result or a CapError. The behaviour
 * against the real vault is in test/node/fs-cap.node.test.ts.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { AdminClient, CapError, FsCap, isCapError } from "./index.ts";
import type { FetchLike } from "./types.ts";

const TOKEN = "abcdefghijklmnopqrstuvwxyz234567";
const CAP_URL = `http://vault.test:8787/object/${TOKEN}`;

interface Sent {
  method: string;
  url: URL;
  headers: Headers;
  body: string | null;
}

/** A fetch double that records requests and answers from a handler. */
function fakeVault(answer: (sent: Sent) => Response | Promise<Response>): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request = new Request(input, init);
    const body = request.body ? await request.text() : null;
    const record = { method: request.method, url: new URL(request.url), headers: request.headers, body };
    sent.push(record);
    return answer(record);
  };
  return { fetch, sent };
}

const json = (status: number, value: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json", ...headers } });
const wireError = (status: number, code: string, message = code) => json(status, { error: { code, message } });

describe("paths travel as data, exactly as given", () => {
  const hostile = [
    "../../../etc/passwd",
    "/etc/passwd",
    "a/../b",
    "%2e%2e/secret",
    "..%2fsecret",
    "a?b=c&path=/etc/passwd#frag",
    "spaces and + plus",
    "C:\\Windows",
    "~/.ssh/id_rsa",
    "naïve/ünïcödé/😀",
    "",
  ];

  it.each(hostile)("read(%j) puts the path only in ?path= and never in the URL path", async (path) => {
    const { fetch, sent } = fakeVault(() => wireError(400, "path_escapes"));
    const fs = new FsCap(CAP_URL, { fetch });
    await expect(fs.read(path)).rejects.toBeInstanceOf(CapError);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.url.pathname).toBe(`/object/${TOKEN}/file`);
    expect(sent[0]!.url.searchParams.getAll("path")).toEqual([path]);
    expect([...sent[0]!.url.searchParams.keys()]).toEqual(["path"]);
  });

  it("every path-taking method sends the path untouched (query or JSON body)", async () => {
    const { fetch, sent } = fakeVault((s) => {
      if (s.url.pathname.endsWith("/subdir"))
        return json(201, { token: "b".repeat(32), url: "x", id: "kid", rights: ["read"], expiresAt: null });
      if (s.url.pathname.endsWith("/list")) return json(200, { entries: [], cursor: null });
      if (s.url.pathname.endsWith("/stat")) return json(200, { type: "dir" });
      if (s.method === "PUT") return json(201, { size: 1, etag: "e" });
      if (s.method === "DELETE") return new Response(null, { status: 204 });
      return json(200, {});
    });
    const fs = new FsCap(CAP_URL, { fetch });
    const p = "../x/./y//z";
    await fs.write(p, "a");
    await fs.stat(p);
    await fs.listPage(p);
    await fs.delete(p);
    await fs.move(p, "/abs");
    await fs.subdir({ path: p });
    expect(sent.slice(0, 4).map((s) => s.url.searchParams.get("path"))).toEqual([p, p, p, p]);
    expect(JSON.parse(sent[4]!.body!)).toEqual({ from: p, to: "/abs" });
    expect(JSON.parse(sent[5]!.body!)).toEqual({ path: p });
    for (const s of sent) expect(s.url.pathname.startsWith(`/object/${TOKEN}`)).toBe(true);
  });

  it("a trailing slash on the cap URL and a proxy mount prefix are kept", async () => {
    const { fetch, sent } = fakeVault(() => json(200, { type: "dir" }));
    await new FsCap(`https://proxy.test/vault/object/${TOKEN}/`, { fetch }).stat();
    expect(sent[0]!.url.href).toBe(`https://proxy.test/vault/object/${TOKEN}/stat?path=`);
  });
});

describe("errors", () => {
  it("a wire error becomes a CapError with the code, status and message", async () => {
    const { fetch } = fakeVault(() => wireError(400, "path_escapes", "path escapes"));
    const error = await new FsCap(CAP_URL, { fetch }).read("../x").catch((e) => e);
    expect(error).toBeInstanceOf(CapError);
    expect(isCapError(error)).toBe(true);
    expect({ code: error.code, status: error.status, message: error.message }).toEqual({
      code: "path_escapes",
      status: 400,
      message: "path escapes",
    });
  });

  it("a non-JSON error body (proxy page, crashed worker) is `unavailable` with its status", async () => {
    const { fetch } = fakeVault(() => new Response("<html>Bad gateway</html>", { status: 502 }));
    const error = await new FsCap(CAP_URL, { fetch }).info().catch((e) => e);
    expect(error).toMatchObject({ code: "unavailable", status: 502 });
  });

  it("JSON without an error code is `unavailable` too", async () => {
    const { fetch } = fakeVault(() => json(500, { oops: true }));
    await expect(new FsCap(CAP_URL, { fetch }).info()).rejects.toMatchObject({ code: "unavailable", status: 500 });
  });

  it("a malformed success body is `unavailable`", async () => {
    const { fetch } = fakeVault(() => new Response("not json", { status: 200 }));
    await expect(new FsCap(CAP_URL, { fetch }).stat("a")).rejects.toMatchObject({ code: "unavailable", status: 200 });
  });

  it("an unreachable vault is `unavailable` with status 0, and the message never quotes the token", async () => {
    const fetch: FetchLike = async (input) => {
      // Real fetch errors can quote the URL (e.g. "Failed to parse URL from …").
      throw new TypeError(`fetch failed for ${input}`, { cause: new Error(`connect ECONNREFUSED ${input}`) });
    };
    const error = await new FsCap(CAP_URL, { fetch }).read("a").catch((e) => e);
    expect(error).toMatchObject({ code: "unavailable", status: 0 });
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.message).not.toContain(TOKEN);
    expect(error.stack ?? "").not.toContain(TOKEN);
    expect(inspect(error, { depth: 5 })).not.toContain(TOKEN);
  });

  it("a GET that meets a connection closed under it is sent once more; a write is not", async () => {
    // What a kept-alive socket the server already closed looks like to fetch.
    const dropFirst = () => {
      const calls: string[] = [];
      const fetch: FetchLike = async (_input, init) => {
        calls.push(init?.method ?? "GET");
        if (calls.length === 1) throw new TypeError("fetch failed", { cause: new Error("other side closed") });
        return new Response("hello", { status: 200, headers: { etag: '"e"' } });
      };
      return { fetch, calls };
    };
    const reader = dropFirst();
    expect(await new FsCap(CAP_URL, { fetch: reader.fetch }).readText("a")).toBe("hello");
    expect(reader.calls).toEqual(["GET", "GET"]);
    // The PUT may have been applied before the connection dropped: a second
    // try could answer for the first, so the caller hears of the failure.
    const writer = dropFirst();
    const error = await new FsCap(CAP_URL, { fetch: writer.fetch }).write("a", "x").catch((e) => e);
    expect(error).toMatchObject({ code: "unavailable", status: 0 });
    expect(writer.calls).toEqual(["PUT"]);
  });

  it("a server message that somehow echoes the token is redacted", async () => {
    const { fetch } = fakeVault(() => wireError(404, "not_found", `nothing at /object/${TOKEN}/x`));
    const error = await new FsCap(CAP_URL, { fetch }).read("x").catch((e) => e);
    expect(error.message).not.toContain(TOKEN);
  });

  it("a stream without a length is refused before sending (length_required)", async () => {
    const { fetch, sent } = fakeVault(() => json(201, { size: 0, etag: "e" }));
    const stream = new ReadableStream<Uint8Array>({ start: (c) => c.close() });
    await expect(new FsCap(CAP_URL, { fetch }).write("a", stream)).rejects.toMatchObject({
      code: "length_required",
      status: 0,
    });
    expect(sent).toHaveLength(0);
  });

  it("an aborted call rejects with the abort, not a CapError", async () => {
    const controller = new AbortController();
    controller.abort();
    const fetch: FetchLike = (input, init) => globalThis.fetch(input, init);
    await expect(new FsCap(CAP_URL, { fetch }).read("a", { signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
  });
});

describe("the cap URL is a secret", () => {
  it("String, JSON and inspect show the id once known, never the token", async () => {
    const { fetch } = fakeVault(() =>
      json(200, {
        id: "pubid",
        rights: ["read"],
        label: null,
        createdAt: "2025-01-01T00:00:00.000Z",
        expiresAt: null,
        parent: null,
      }),
    );
    const fs = new FsCap(CAP_URL, { fetch });
    for (const shown of [String(fs), JSON.stringify(fs), inspect(fs), inspect({ nested: fs }, { depth: 9 }), `${fs}`]) {
      expect(shown).not.toContain(TOKEN);
    }
    expect(String(fs)).toBe("FsCap(…)");
    await fs.info();
    expect(String(fs)).toBe("FsCap(pubid)");
    expect(JSON.stringify({ fs })).toBe('{"fs":{"type":"FsCap","id":"pubid"}}');
    expect(inspect(fs)).toBe("FsCap(pubid)");
    expect(fs.url).toBe(CAP_URL);
  });

  it("a malformed cap URL is refused without echoing it", () => {
    for (const bad of [
      `ftp://x/object/${TOKEN}`,
      `http://x/objects/${TOKEN}`,
      `not a url ${TOKEN}`,
      `http://x/object/`,
    ]) {
      const error = (() => {
        try {
          new FsCap(bad);
        } catch (e) {
          return e as Error;
        }
      })();
      expect(error).toBeInstanceOf(TypeError);
      expect(error!.message).not.toContain(TOKEN);
    }
  });

  it("AdminClient never shows its token", async () => {
    const admin = new AdminClient("http://vault.test:8787/", "super-secret-admin", {
      fetch: async () => {
        throw new Error("boom super-secret-admin");
      },
    });
    expect(`${admin} ${JSON.stringify(admin)} ${inspect(admin)}`).not.toContain("super-secret-admin");
    const error = await admin.listRoots().catch((e) => e);
    expect(error).toMatchObject({ code: "unavailable", status: 0 });
    expect(error.message).not.toContain("super-secret-admin");
  });
});

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
