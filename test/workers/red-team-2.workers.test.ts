import { env } from "cloudflare:test";
import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { digestToken } from "../../shared/token.ts";
import type { SearchPage } from "../../shared/wire-types.ts";
import { SEARCH_CHEAP_PROGRAM, searchBudget } from "../../worker/content-search.ts";
import { deleteFolderTree, moveFolderTree } from "../../worker/folder-ops.ts";
import { call, cap, child, mintRoot } from "./vault.ts";

// Red team of the session's new surfaces: what was found (a failing test
// before its fix) and the attacks that held, kept so they keep holding.

type Cap = ReturnType<typeof cap>;
let counter = 0;

async function search(root: Cap, params: Record<string, string>): Promise<SearchPage> {
  const res = await call("GET", `/object/${root.token}/search?${new URLSearchParams(params)}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

function forgeCursor(value: unknown): string {
  return btoa(JSON.stringify(value)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  async function treeRoot(files: Record<string, string>): Promise<Cap> {
    const root = cap((await mintRoot(`red-team-2/${backend}/${++counter}/`, { backend })).token);
    for (const [path, body] of Object.entries(files)) expect((await root.write(path, body)).status).toBe(201);
    return root;
  }

  it("search: a costly program scans fewer bytes a request, skips files and lines it cannot afford", async () => {
    // re2js's DFA thrashes on this program (its states are the last 201
    // characters) and each character then steps every live thread: ~20 us a
    // character measured, so the 2 MiB every pattern was allowed took ~40 s of CPU.
    const costly = "a[ab]{200}$";
    const size = RE2JS.compile(costly).programSize();
    expect(size).toBeGreaterThan(SEARCH_CHEAP_PROGRAM);
    // 5e6 instruction-characters a request, 5e5 a line (worker/content-search.ts).
    expect(searchBudget(size)).toMatchObject({ bytes: Math.floor(5e6 / size), lineChars: Math.floor(5e5 / size) });
    let seed = 7;
    const ab = (n: number) =>
      Array.from({ length: n }, () => {
        seed = (seed * 1103515245 + 12345) & 0x7fffffff;
        return seed & 1 ? "a" : "b";
      }).join("");
    const small = () => `${Array.from({ length: 26 }, () => ab(300)).join("\n")}\na${"b".repeat(200)}\n`;
    const names = ["1.txt", "2.txt", "3.txt", "4.txt", "5.txt", "6.txt"];
    const root = await treeRoot({
      ...Object.fromEntries(names.map((n) => [n, small()])),
      "big.txt": `${"b".repeat(999)}\n`.repeat(100),
      "wide.txt": `a${"b".repeat(3000)}\n`,
    });
    const cheap = await search(root, { pattern: "b$", mode: "files" });
    expect(cheap).toMatchObject({
      files: ["1.txt", "2.txt", "3.txt", "4.txt", "5.txt", "6.txt", "big.txt", "wide.txt"],
    });
    const pages: SearchPage[] = [];
    let cursor: string | null = null;
    do {
      const p: SearchPage = await search(root, { pattern: costly, mode: "files", ...(cursor ? { cursor } : {}) });
      expect(p.scanned.bytes).toBeLessThanOrEqual(5e6 / size);
      pages.push(p);
      cursor = p.cursor;
      expect(pages.length).toBeLessThan(10);
    } while (cursor !== null);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.flatMap((p) => p.files)).toEqual(names);
    expect(pages.flatMap((p) => p.skipped)).toEqual([
      { path: "big.txt", reason: "too_large" },
      { path: "wide.txt", reason: "long_line" },
    ]);
  });

  it("held: a subdir cap's search never reaches its parent's files, whatever cursor it is handed", async () => {
    const root = await treeRoot({ "a.txt": "secret\n", "sub/b.txt": "secret\n", "z.txt": "secret\n" });
    const sub = await child(root, { path: "sub", rights: ["read", "list"] });
    const parentCursor = (await search(root, { pattern: "secret", limit: "1" })).cursor;
    expect(parentCursor).not.toBeNull();
    const forged = [
      parentCursor!,
      forgeCursor({ a: null, f: "../a.txt", m: 0 }),
      forgeCursor({ a: "..", f: null, m: 0 }),
      forgeCursor({ a: "../", f: "../z.txt", m: 0 }),
      forgeCursor({ a: "\u0000", f: null, m: 0 }),
    ];
    for (const c of forged) {
      const res = await call(
        "GET",
        `/object/${sub.token}/search?${new URLSearchParams({ pattern: "secret", cursor: c })}`,
      );
      const text = await res.text();
      expect(res.status, text).toBeLessThan(500);
      expect(text).not.toContain("a.txt");
      expect(text).not.toContain("z.txt");
      expect(text).not.toContain("red-team-2/");
      if (res.status === 200) for (const m of (JSON.parse(text) as SearchPage).matches!) expect(m.path).toBe("b.txt");
    }
    for (const path of ["..", "../", "/", "sub/..", "%2e%2e"]) {
      const res = await call("GET", `/object/${sub.token}/search?${new URLSearchParams({ pattern: "secret", path })}`);
      const text = await res.text();
      expect(res.status, text).toBeLessThan(500);
      expect(text).not.toContain("a.txt");
      expect(text).not.toContain("red-team-2/");
    }
  });

  it("held: odd search parameters answer a typed 4xx or a page, never a 5xx nor the root", async () => {
    const root = await treeRoot({ "a.txt": "abc\n\u00e9t\u00e9\n" });
    const odd: string[] = [
      "pattern=%ED%A0%80",
      "pattern=%F0%9F",
      "pattern=%5CC",
      `pattern=${encodeURIComponent("(?P<n>a)\\k<n>")}`,
      `pattern=${encodeURIComponent("(?U)a+")}`,
      `pattern=${encodeURIComponent("a{1001}")}`,
      `pattern=${encodeURIComponent("(?i)\\x{10FFFF}")}`,
      `pattern=${encodeURIComponent("\\p{Nonesuch}")}`,
      "pattern=a&pattern=b",
      "pattern=a&limit=0",
      "pattern=a&limit=1e2",
      "pattern=a&context=1e1",
      "pattern=a&ignoreCase=TRUE",
      "pattern=a&mode=",
      "pattern=a&path=%00",
      "pattern=a&path=a.txt",
      "pattern=a&glob=%5B",
      `pattern=a&glob=${encodeURIComponent("{".repeat(200))}`,
      `pattern=a&cursor=${"A".repeat(5000)}`,
      `pattern=a&cursor=${forgeCursor({ a: null, f: null, m: 1e300 })}`,
      `pattern=a&cursor=${forgeCursor({ a: null, f: null, m: -1, x: 1 })}`,
      `pattern=a&cursor=${forgeCursor([null, null, 0])}`,
    ];
    for (const query of odd) {
      const res = await call("GET", `/object/${root.token}/search?${query}`);
      const text = await res.text();
      expect(res.status, `${query}: ${text}`).toBeLessThan(500);
      expect(text).not.toContain("red-team-2/");
    }
  });

  it("held: a subdir cap's MCP session stream says nothing of changes outside its subtree", async () => {
    const root = await treeRoot({ "in/a.txt": "a", "out/b.txt": "b" });
    const sub = await child(root, { path: "in", rights: ["read", "list"] });
    const mcpHeaders = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-11-25",
    };
    const init = await call("POST", `/object/${sub.token}/mcp`, {
      headers: mcpHeaders,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "red-team", version: "1" } },
      }),
    });
    expect(init.status).toBe(200);
    await init.text();
    const session = init.headers.get("mcp-session-id");
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    const subscribe = await call("POST", `/object/${sub.token}/mcp`, {
      headers: { ...mcpHeaders, "mcp-session-id": session! },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri: "file:///a.txt" } }),
    });
    expect(subscribe.status, await subscribe.text()).toBe(200);
    const stream = await call("GET", `/object/${sub.token}/mcp`, {
      headers: { accept: "text/event-stream", "mcp-session-id": session!, "mcp-protocol-version": "2025-11-25" },
    });
    expect(stream.status).toBe(200);
    // Outside first (a new file, a change, a move in from outside the subtree's view), then the one inside.
    expect((await root.write("out/new.txt", "n")).status).toBe(201);
    expect((await root.write("out/b.txt", "b2")).status).toBe(200);
    expect((await root.move({ from: "out/b.txt", to: "out/c.txt" })).status).toBe(200);
    expect((await root.write("in/a.txt", "a2")).status).toBe(200);
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let seen = "";
    while (!seen.includes("notifications/resources/updated")) {
      const { done, value } = await reader.read();
      if (done) break;
      seen += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    const messages = seen
      .split("\n")
      .filter((l) => l.startsWith("data: "))
      .map((l) => JSON.parse(l.slice(6)));
    expect(messages).toEqual([
      { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri: "file:///a.txt" } },
    ]);
    expect(seen).not.toContain("out/");
  });

  it("held: a file written into a folder mid-move or mid-delete is never lost and nothing answers 5xx", async () => {
    const root = await treeRoot({ "m/a.txt": "a", "m/b.txt": "b", "m/s/c.txt": "c", "d/a.txt": "a", "d/b.txt": "b" });
    const stub = capObjectStub(env, (await digestToken(root.token)).key);
    const moved = await moveFolderTree(stub as never, "m", "n", false, {
      onStep: async (i) => {
        if (i === 1) {
          expect((await root.write("m/late.txt", "late")).status).toBe(201);
          expect((await root.write("m/s/late2.txt", "late")).status).toBe(201);
        }
      },
    });
    expect(moved.ok ? "ok" : moved.error.code).not.toBe("unavailable");
    const files = async (path: string) => {
      const res = await root.list(path, "&depth=0");
      return res.status === 404
        ? []
        : ((await res.json()) as { entries: { name: string }[] }).entries.map((e) => e.name);
    };
    const after = [...(await files("m")).map((n) => `m/${n}`), ...(await files("n")).map((n) => `n/${n}`)];
    expect(after.filter((p) => p.endsWith("late.txt") || p.endsWith("late2.txt"))).toHaveLength(2);
    expect(after.filter((p) => /(^|\/)(a|b|c)\.txt$/.test(p)).sort()).toEqual(["n/a.txt", "n/b.txt", "n/s/c.txt"]);
    const removed = await deleteFolderTree(stub as never, "d", {
      onStep: async (i) => {
        if (i === 0) expect((await root.write("d/late.txt", "late")).status).toBe(201);
      },
    });
    expect(removed.ok ? "ok" : removed.error.code).not.toBe("unavailable");
    const http = await call("DELETE", `/object/${root.token}/folder?path=d&recursive=true`);
    expect(http.status).toBeLessThan(500);
  });
});
