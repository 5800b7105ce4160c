import { newWebSocketRpcSession, type RpcStub } from "capnweb";
import { describe, expect, it } from "vitest";
import { MAX_CONTENT_TYPE_BYTES } from "../../shared/content-type.ts";
import { refusal } from "../../shared/refusals.ts";
import type { VersionPage } from "../../shared/wire-types.ts";
import { call, cap, child, mintRoot } from "./vault.ts";

// What a write may store and what a restore may answer, decided once in the
// cap's object for every transport (HTTP, Cap'n Web RPC, MCP) and alike on
// both backends: a Content-Type that could not be served back as a header is
// refused with nothing stored, and a restore needs read as well as write.

let counter = 0;
type Cap = ReturnType<typeof cap>;

interface RpcCap {
  write(path: string, bytes: string, options?: { contentType?: string }): Promise<unknown>;
  restore(id: string): Promise<unknown>;
}

/** A live Cap'n Web session on `c`, over the worker's real WebSocket route. */
async function rpc(c: Cap): Promise<RpcStub<RpcCap>> {
  const res = await call("GET", `/object/${c.token}/rpc`, { headers: { Upgrade: "websocket" } });
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  return newWebSocketRpcSession<RpcCap>(ws as unknown as WebSocket);
}

/** The refusal an RPC call was rejected with: the contract's code and text, nothing else. */
async function rejection(p: Promise<unknown>): Promise<{ code: unknown; message: unknown }> {
  try {
    await p;
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown };
    return { code: e.code, message: e.message };
  }
  throw new Error("the call succeeded");
}

async function versionCount(c: Cap, path: string): Promise<number> {
  const res = await call("GET", `/object/${c.token}/versions?path=${encodeURIComponent(path)}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as VersionPage).versions.length;
}

async function mcp(c: Cap, method: string, params: Record<string, unknown>): Promise<string> {
  const res = await call("POST", `/object/${c.token}/mcp`, {
    headers: { accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 1, method, params },
  });
  return res.text();
}

const typeRefusal = refusal("contentTypeInvalid", { max: MAX_CONTENT_TYPE_BYTES });

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  const fresh = async () => cap((await mintRoot(`guards/${backend}/${++counter}/`, { backend })).token);

  it("refuses over RPC a Content-Type no header could carry, storing nothing, and leaves a file it would overwrite as it was", async () => {
    const root = await fresh();
    const session = await rpc(root);
    await session.write("kept.txt", "kept", { contentType: "text/plain" });
    const bad = [
      "text/plain\r\nX-Injected: 1",
      "text/plain\n",
      "a\0b",
      "text/\u0001plain",
      "text/plain\u007f",
      "text/pl\u00e4in",
      " text/plain",
      "text/plain\t",
      `text/plain; x=${"y".repeat(MAX_CONTENT_TYPE_BYTES)}`,
      "x".repeat(256 * 1024),
    ];
    for (const contentType of bad) {
      expect(await rejection(session.write("new.txt", "new", { contentType })), JSON.stringify(contentType)).toEqual(
        typeRefusal,
      );
      expect(await rejection(session.write("kept.txt", "changed", { contentType }))).toEqual(typeRefusal);
    }
    expect((await root.stat("new.txt")).status).toBe(404);
    expect(await versionCount(root, "new.txt")).toBe(0);
    const kept = await root.read("kept.txt");
    expect(kept.status).toBe(200);
    expect(kept.headers.get("content-type")).toBe("text/plain");
    expect(await kept.text()).toBe("kept");
    expect(await versionCount(root, "kept.txt")).toBe(1);
  });

  it("refuses over HTTP a Content-Type over the bound with the same 400, storing nothing", async () => {
    const root = await fresh();
    const res = await root.write("f.txt", "x", { "content-type": `a/${"b".repeat(MAX_CONTENT_TYPE_BYTES)}` });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: typeRefusal });
    expect((await root.stat("f.txt")).status).toBe(404);
    expect(await versionCount(root, "f.txt")).toBe(0);
  });

  it("stores a type of exactly the bound, with tabs and spaces inside, and serves it back as it was sent", async () => {
    const root = await fresh();
    const head = "text/plain;\tcharset=utf-8; x=";
    const type = head + "y".repeat(MAX_CONTENT_TYPE_BYTES - head.length);
    expect(type.length).toBe(MAX_CONTENT_TYPE_BYTES);
    const session = await rpc(root);
    await session.write("rpc.txt", "r", { contentType: type });
    expect((await root.write("http.txt", "h", { "content-type": type })).status).toBe(201);
    for (const path of ["rpc.txt", "http.txt"]) {
      expect((await root.read(path)).headers.get("content-type")).toBe(type);
      expect(await (await root.stat(path)).json()).toMatchObject({ contentType: type });
    }
    // No type, or an empty one, is the default on both backends.
    await session.write("none.txt", "n", { contentType: "" });
    expect((await root.read("none.txt")).headers.get("content-type")).toBe("application/octet-stream");
  });

  it("refuses a restore through a cap without read on every transport, as any missing right is refused, writing nothing", async () => {
    const root = await fresh();
    // Minted before the history they are tested on, so every version is within their reach but for rights.
    const writeOnly = await child(root, { path: "", rights: ["write"] });
    const readOnly = await child(root, { path: "", rights: ["read"] });
    await root.write("secret.txt", "the old secret");
    await root.write("secret.txt", "public now");
    const versions = (await (
      await call("GET", `/object/${root.token}/versions?path=secret.txt`)
    ).json()) as VersionPage;
    const old = versions.versions[1]!;
    const lacking = refusal("needsRights", { rights: ["read", "write"], any: false });

    // HTTP: a real id and an unknown one are refused alike, so ids cannot be walked.
    const answers: string[] = [];
    for (const c of [writeOnly, readOnly])
      for (const id of [old.id, "999999"]) {
        const res = await call("POST", `/object/${c.token}/versions/${id}/restore`);
        expect(res.status).toBe(403);
        answers.push(await res.text());
      }
    expect(new Set(answers)).toEqual(new Set([`${JSON.stringify({ error: lacking })}\n`]));

    // Cap'n Web RPC: the same refusal.
    const session = await rpc(writeOnly);
    expect(await rejection(session.restore(old.id))).toEqual(lacking);
    expect(await rejection(session.restore("999999"))).toEqual(lacking);

    // MCP: restore_version is not offered without read, and calling it is answered as for a read-only cap.
    expect(await mcp(writeOnly, "tools/list", {})).not.toContain("restore_version");
    const called = (c: Cap) => mcp(c, "tools/call", { name: "restore_version", arguments: { versionId: old.id } });
    const mcpAnswer = await called(writeOnly);
    expect(mcpAnswer).toBe(await called(readOnly));
    for (const leaked of ["secret.txt", old.sha256 ?? "no sha"]) expect(mcpAnswer).not.toContain(leaked);

    // Nothing was written by any of them.
    expect(await (await root.read("secret.txt")).text()).toBe("public now");
    expect(await versionCount(root, "secret.txt")).toBe(2);

    // A cap with both restores as before.
    expect((await call("POST", `/object/${root.token}/versions/${old.id}/restore`)).status).toBe(200);
    expect(await (await root.read("secret.txt")).text()).toBe("the old secret");
  });
});
