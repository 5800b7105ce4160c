/**
 * The cap-scoped MCP endpoint as an HTTP endpoint, against the running
 * launcher: one server per set of rights shared by every request, the
 * Streamable HTTP answers, and unknown, malformed and revoked tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { batchTexts, mcpClients, toolCall } from "./mcp-client.ts";
import { expectNoPrefixOrHostPath, mcpEndpointVault } from "./mcp-endpoint-fixture.ts";
import type { SharedVault } from "./shared-vault.ts";

let vault: SharedVault;
let fs: FsCap;
/** Everything any MCP response carried (`seen`) is checked at the end for the root prefix. */
const { seen, connect, ok, closeAll, post: postMcp } = mcpClients();

beforeAll(async () => {
  ({ vault, fs } = await mcpEndpointVault("mcp-transport"));
  // The revocation tests read it: in mcp-endpoint.node.test.ts, edit_file leaves it so.
  await fs.write("notes/a.md", "line1\nLINE2\nline3\n");
});

afterAll(async () => {
  await closeAll();
});

describe("one server per set of rights, shared by every request", () => {
  it("calls on two caps with the same rights, 16 in flight each and the same JSON-RPC ids, each reach their own cap", async () => {
    for (const side of ["a", "b"]) {
      for (let i = 0; i < 8; i++) await fs.write(`shared/${side}/f${i}.md`, `${side}${i}`);
    }
    const caps = await Promise.all(["a", "b"].map((side) => fs.subdir({ path: `shared/${side}`, rights: ["read"] })));
    const clients = await Promise.all(caps.map((cap) => connect(cap.url)));
    // Each lane alternates the official client's calls with batches, whose later calls run after other requests' I/O.
    const lane = async (side: number, k: number) => {
      const name = "ab"[side]!;
      for (let n = 0; n < 4; n++) {
        const f = (m: number) => (k + n + m) % 8;
        if ((await ok(clients[side]!, "read_file", { path: `f${f(0)}.md` })) !== `${name}${f(0)}`) return false;
        const batch = [1, 2, 3].map((id) => toolCall(id, "read_file", { path: `f${f(id)}.md` }));
        const texts = batchTexts((await postMcp(caps[side]!.url, batch)).json);
        if (texts.join() !== [1, 2, 3].map((m) => `${name}${f(m)}`).join()) return false;
      }
      return true;
    };
    const lanes = await Promise.all(Array.from({ length: 32 }, (_, k) => lane(k % 2, k)));
    expect(lanes.every(Boolean)).toBe(true);
  });

  it("answers a batch with the ids its sender chose, in order, each call on this request's cap", async () => {
    await fs.write("shared/batch.md", "batch");
    const { status, json } = await postMcp(fs.url, [
      toolCall(7, "read_file", { path: "shared/batch.md" }),
      toolCall(3, "read_file", { path: "shared/a/f1.md" }),
    ]);
    expect(status).toBe(200);
    expect((json as { id: number }[]).map((a) => a.id)).toEqual([7, 3]);
    expect(batchTexts(json)).toEqual(["a1", "batch"]);
  });
});

describe("Streamable HTTP answers, as the SDK's transport gave them", () => {
  const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
  const init = {
    jsonrpc: "2.0",
    id: 2,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  };
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  it.each<[string, Record<string, string>, unknown, number, unknown]>([
    [
      "no SSE in Accept",
      { ...headers, accept: "application/json" },
      list,
      406,
      {
        code: -32000,
        message: "Not Acceptable: Client must accept both application/json and text/event-stream",
      },
    ],
    [
      "not JSON",
      { ...headers, "content-type": "text/plain" },
      list,
      415,
      {
        code: -32000,
        message: "Unsupported Media Type: Content-Type must be application/json",
      },
    ],
    [
      "an unknown protocol version",
      { ...headers, "mcp-protocol-version": "1999-01-01" },
      list,
      400,
      {
        code: -32000,
        message: expect.stringMatching(/^Bad Request: Unsupported protocol version: 1999-01-01 \(supported versions: /),
      },
    ],
    ["not JSON-RPC", headers, { hello: 1 }, 400, { code: -32700, message: "Parse error: Invalid JSON-RPC message" }],
    [
      "initialize in a batch",
      headers,
      [init, list],
      400,
      {
        code: -32600,
        message: "Invalid Request: Only one initialization request is allowed",
      },
    ],
  ])("%s", async (_, headers, body, status, error) => {
    const response = await fetch(`${fs.url}/mcp`, { method: "POST", headers, body: JSON.stringify(body) });
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({ jsonrpc: "2.0", id: null, error });
  });

  it("notifications alone are accepted with 202 and no body", async () => {
    const response = await fetch(`${fs.url}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("");
  });

  it("initialize negotiates the version it was asked for", async () => {
    const { status, json } = await postMcp(fs.url, init);
    expect(status).toBe(200);
    expect(json).toMatchObject({ jsonrpc: "2.0", id: 2, result: { protocolVersion: "2025-06-18" } });
  });
});

describe("the endpoint", () => {
  it("answers unknown, malformed and revoked tokens with the same 404 as every other route", async () => {
    const unknown = `${vault.url}/object/${"b".repeat(48)}`;
    const reference = await fetch(unknown);
    expect(reference.status).toBe(404);
    const referenceBody = await reference.text();
    const revoked = await fs.subdir({ path: "notes" });
    await revoked.revoke();
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    for (const capUrl of [unknown, `${vault.url}/object/nope`, revoked.url]) {
      for (const method of ["POST", "GET", "DELETE"]) {
        const response = await fetch(`${capUrl}/mcp`, {
          method,
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          ...(method === "POST" ? { body: JSON.stringify(init) } : {}),
        });
        expect(response.status, `${method} ${capUrl}`).toBe(404);
        expect(await response.text()).toBe(referenceBody);
      }
    }
    await expect(connect(revoked.url)).rejects.toThrow();
  });

  it("is stateless: GET (no server stream) is 405", async () => {
    const response = await fetch(`${fs.url}/mcp`, { headers: { accept: "text/event-stream" } });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });

  it("a cap revoked between calls stops answering at once", async () => {
    const sub = await fs.subdir({ path: "notes" });
    const client = await connect(sub.url);
    expect(await ok(client, "read_file", { path: "a.md" })).toBe("line1\nLINE2\nline3\n");
    await sub.revoke();
    await expect(client.callTool({ name: "read_file", arguments: { path: "a.md" } })).rejects.toThrow(/no_such_cap/);
  });

  it("a revoked cap whose rights the endpoint has seen answers every request with the same 404", async () => {
    const referenceBody = await (await fetch(`${vault.url}/object/${"b".repeat(48)}`)).text();
    await fs.write("seen/a.md", "seen");
    const sub = await fs.subdir({ path: "seen", rights: ["read", "list"] });
    const client = await connect(sub.url);
    expect(await ok(client, "read_file", { path: "a.md" })).toBe("seen");
    await sub.revoke();
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const bodies: [string, Record<string, string>][] = [
      [JSON.stringify(toolCall(1, "read_file", { path: "a.md" })), headers],
      [JSON.stringify(toolCall(1, "read_file", { path: 7 })), headers],
      [JSON.stringify(toolCall(1, "delete_file", { path: "a.md" })), headers],
      // Tools that answer without failing for a missing file, or read no file at all, still find the cap dead.
      [JSON.stringify(toolCall(1, "read_multiple_files", { paths: ["a.md"] })), headers],
      [JSON.stringify(toolCall(1, "list_allowed_directories", {})), headers],
      [JSON.stringify(toolCall(1, "search_files", { pattern: "*" })), headers],
      [JSON.stringify([toolCall(1, "list_directory", {}), toolCall(2, "read_file", { path: "../x" })]), headers],
      [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), headers],
      [JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), headers],
      [JSON.stringify([]), headers],
      [JSON.stringify({ hello: 1 }), headers],
      ["{not json", headers],
      [JSON.stringify(Array.from({ length: 21 }, (_, id) => toolCall(id, "read_file", { path: "a.md" }))), headers],
      [JSON.stringify(toolCall(1, "read_file", { path: "a.md" })), { ...headers, accept: "application/json" }],
    ];
    for (const [body, h] of bodies) {
      const response = await fetch(`${sub.url}/mcp`, { method: "POST", headers: h, body });
      expect(response.status, body).toBe(404);
      expect(await response.text(), body).toBe(referenceBody);
    }
  });
});

describe("secrecy", () => {
  it("no response, description or instruction names the root prefix or a host path", () => {
    expectNoPrefixOrHostPath(seen, vault, 10);
  });
});
