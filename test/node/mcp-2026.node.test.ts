/**
 * The cap's MCP endpoint on the current spec, against the running launcher:
 * Origin checks, files and skills as resources, and both protocol eras.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;
let fs: FsCap;
const clients: Client[] = [];

beforeAll(async () => {
  vault = await startTestVault();
  const response = await fetch(`${vault.url}/admin/roots`, {
    method: "POST",
    headers: { authorization: `Bearer ${vault.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ backend: "r2", prefix: "mcp-2026/", label: "mcp-2026" }),
  });
  expect(response.status).toBe(201);
  fs = new FsCap(((await response.json()) as { url: string }).url);
});

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await vault?.stop();
});

async function connect(capUrl: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "capvault-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${capUrl}/mcp`), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

const ping = (capUrl: string, headers: Record<string, string>) =>
  fetch(`${capUrl}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });

describe("Origin", () => {
  it("refuses a foreign Origin with 403 forbidden, a DNS-rebound Host included, and runs nothing", async () => {
    for (const headers of <Record<string, string>[]>[
      { origin: "http://evil.example.com" },
      { origin: "http://evil.example.com", host: "evil.example.com" },
      { origin: "null" },
    ]) {
      const response = await ping(fs.url, headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(await response.json()).toEqual({
        error: {
          code: "forbidden",
          message:
            "requests from this Origin are refused: only the vault's own origin and loopback origins may use MCP",
        },
      });
    }
    // The same 403 for a token that names no cap: the Origin is judged before the token.
    const unknown = await ping(`${vault.url}/object/not-a-token`, { origin: "http://evil.example.com" });
    expect(unknown.status).toBe(403);
  });

  it("serves the vault's own origin, loopback origins and clients that send none, the official client included", async () => {
    for (const origin of [new URL(vault.url).origin, "http://localhost:6274", "http://127.0.0.1:1"]) {
      expect((await ping(fs.url, { origin })).status, origin).toBe(200);
    }
    expect((await ping(fs.url, {})).status).toBe(200);
    const client = await connect(fs.url, { origin: "http://localhost:6274" });
    await expect(client.ping()).resolves.toBeDefined();
    await expect(connect(fs.url, { origin: "https://evil.example.com" })).rejects.toThrow(/"code":"forbidden"/);
  });
});
