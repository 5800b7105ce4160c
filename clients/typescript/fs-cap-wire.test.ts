/**
 * The SDK's side of the wire, without a server: what each call sends, and how
 * it turns every kind of answer into a result or a CapError. The behaviour
 * against the real vault is in test/node/fs-cap.node.test.ts.
 */
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { CAP_URL, fakeVault, json, TOKEN, wireError } from "../../test/fake-vault.ts";
import { AdminClient, CapError, FsCap, isCapError } from "./index.ts";
import type { FetchLike } from "./types.ts";

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
