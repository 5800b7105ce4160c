import { describe, expect, it } from "vitest";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";

// Etags are the plain MD5 of a file's bytes. A cap that may list but not read
// must not see them: with a 4-digit PIN in a file, 10,000 hashes offline
// would give the PIN away. The same goes for a write-only cap probing with
// If-Match. Caps with `read` see etags as always.

let counter = 0;

async function md5Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("MD5", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

const PIN = "4821";

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  async function vaultWithPin() {
    const root = cap((await mintRoot(`hints/${++counter}/`, { backend })).token);
    expect((await root.write("secrets/pin.txt", PIN)).status).toBe(201);
    return { root, hash: await md5Hex(PIN) };
  }

  it("a list-only cap sees names, types, sizes and times, and no etag, in stat and list", async () => {
    const { root, hash } = await vaultWithPin();
    const lister = await child(root, { path: "", rights: ["list", "subdir"] });
    const narrower = await child(lister, { path: "secrets", rights: ["list"] });

    const stat = await lister.stat("secrets/pin.txt");
    expect(stat.status).toBe(200);
    const statText = await stat.text();
    expect(JSON.parse(statText)).toEqual({
      type: "file",
      size: 4,
      modified: expect.any(String),
      contentType: expect.any(String),
    });
    expect(statText).not.toContain(hash);

    for (const [c, path] of [
      [lister, "secrets"],
      [narrower, ""],
    ] as const) {
      const list = await c.list(path);
      const listText = await list.text();
      expect(JSON.parse(listText).entries).toEqual([
        { name: "pin.txt", type: "file", size: 4, modified: expect.any(String) },
      ]);
      expect(listText).not.toContain(hash);
    }
    // Paging through a cursor goes the same way.
    await root.write("secrets/q.txt", "q");
    const first = (await (await narrower.list("", "&limit=1")).json()) as { cursor: string };
    const next = await narrower.list("", `&limit=1&cursor=${encodeURIComponent(first.cursor)}`);
    expect(JSON.stringify(await next.json())).not.toMatch(/etag/);
    expect(await errorCode(await narrower.read("pin.txt"))).toBe("forbidden");
  });

  it("a list-only cap sees no etag through MCP or the memory tool", async () => {
    const { root, hash } = await vaultWithPin();
    const lister = await child(root, { path: "", rights: ["list"] });
    const mcp = await call("POST", `/object/${lister.token}/mcp`, {
      headers: { accept: "application/json, text/event-stream" },
      json: {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "get_file_info", arguments: { path: "secrets/pin.txt" } },
      },
    });
    const mcpText = await mcp.text();
    expect(mcpText).toContain("size: 4");
    expect(mcpText).not.toContain("etag");
    expect(mcpText).not.toContain(hash);
    const memory = await call("POST", `/object/${lister.token}/memory`, {
      json: { command: "view", path: "/memories" },
    });
    const memoryText = await memory.text();
    expect(memoryText).toContain("pin.txt");
    expect(memoryText).not.toContain(hash);
  });

  it("caps with read see etags, in stat, list and on writes", async () => {
    const { root, hash } = await vaultWithPin();
    const reader = await child(root, { path: "", rights: ["read", "list"] });
    expect(await (await reader.stat("secrets/pin.txt")).json()).toMatchObject({ type: "file", etag: hash });
    expect(((await (await reader.list("secrets")).json()) as { entries: unknown[] }).entries).toEqual([
      { name: "pin.txt", type: "file", size: 4, etag: hash, sha256: expect.any(String), modified: expect.any(String) },
    ]);
    const readOnly = await child(root, { path: "", rights: ["read"] });
    expect(await (await readOnly.stat("secrets/pin.txt")).json()).toMatchObject({ etag: hash });
    expect((await readOnly.read("secrets/pin.txt")).headers.get("etag")).toBe(`"${hash}"`);
    // A reader-writer may still write on a condition.
    const editor = await child(root, { path: "", rights: ["read", "write"] });
    expect((await editor.write("secrets/pin.txt", "9999", { "if-match": `"${hash}"` })).status).toBe(200);
    expect(await errorCode(await editor.write("secrets/pin.txt", "0000", { "if-match": `"${hash}"` }))).toBe(
      "precondition_failed",
    );
  });

  it("a write-only cap cannot test guesses with If-Match or If-None-Match", async () => {
    const { root, hash } = await vaultWithPin();
    const writer = await child(root, { path: "", rights: ["write"] });
    const wrong = await md5Hex("0000");
    // Right guess or wrong guess, the answer is the same refusal, and nothing is written.
    const probes: [string, string][] = [
      ["if-match", `"${hash}"`],
      ["if-match", `"${wrong}"`],
      ["if-none-match", `"${hash}"`],
      ["if-none-match", `"${wrong}"`],
      ["if-match", `*, "${hash}"`],
      ["if-match", `"sha256:${"0".repeat(64)}"`],
    ];
    for (const probe of probes) {
      const res = await writer.write("secrets/pin.txt", PIN, [probe]);
      expect(res.status).toBe(403);
      expect(await errorCode(res)).toBe("forbidden");
    }
    expect(await (await root.stat("secrets/pin.txt")).json()).toMatchObject({ etag: hash });
    // Conditions on existence alone reveal no more than a plain write's 201 or 200.
    expect(await errorCode(await writer.write("secrets/pin.txt", "x", { "if-none-match": "*" }))).toBe(
      "precondition_failed",
    );
    expect((await writer.write("secrets/new.txt", "x", { "if-none-match": "*" })).status).toBe(201);
    expect((await writer.write("secrets/new.txt", "y", { "if-match": "*" })).status).toBe(200);
    // The write's own answer carries the etag of the bytes the writer sent: nothing it did not know.
    expect(await (await writer.write("secrets/new.txt", "z")).json()).toEqual({
      size: 1,
      etag: await md5Hex("z"),
      sha256: "594e519ae499312b29433b7dd8a97ff068defcba9755b6d5d00e84c524d67b06",
    });
  });
});
