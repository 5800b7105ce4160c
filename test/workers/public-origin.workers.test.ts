import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { app } from "../../worker/app.ts";
import { ADMIN, call, errorCode, mintRoot } from "./vault.ts";

/**
 * The origin in minted cap URLs is the configured CAPVAULT_PUBLIC_URL, never
 * the request's Host (on Cloudflare the caller's to choose). A deployment
 * without one refuses everything that hands out cap URLs and still serves the rest.
 */
const unconfigured = { ...env, CAPVAULT_PUBLIC_URL: undefined };
// The real worker and bindings, less the one var.
const fetchUnconfigured = (url: string, init: RequestInit = {}) => app.fetch(new Request(url, init), unconfigured);

describe("the public origin", () => {
  it("names the configured origin in minted URLs whatever Host the request carries", async () => {
    const res = await call("POST", "https://attacker.example/admin/roots", {
      headers: { authorization: `Bearer ${ADMIN}` },
      json: { backend: "r2", prefix: "origin-host/" },
    });
    expect(res.status).toBe(201);
    const root = (await res.json()) as { url: string; token: string };
    expect(root.url).toBe(`https://vault.test/object/${root.token}`);
    const child = await call("POST", `https://attacker.example/object/${root.token}/subdir`, {
      json: { path: "a", rights: ["read"] },
    });
    expect(child.status).toBe(201);
    expect(((await child.json()) as { url: string }).url).toMatch(/^https:\/\/vault\.test\/object\//);
  });

  it("without CAPVAULT_PUBLIC_URL, minting, RPC and MCP are refused, reads still served", async () => {
    const refusedRoot = await fetchUnconfigured("https://attacker.example/admin/roots", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ backend: "r2", prefix: "origin-none/" }),
    });
    expect(refusedRoot.status).toBe(503);
    const body = await refusedRoot.text();
    expect(JSON.parse(body).error).toEqual({
      code: "unavailable",
      message: "this vault has no public URL configured (CAPVAULT_PUBLIC_URL), so it hands out no cap URLs",
    });
    expect(body).not.toContain("attacker.example");

    const root = await mintRoot("origin-none/");
    expect((await call("PUT", `/object/${root.token}/file?path=a.txt`, { body: "kept" })).status).toBe(201);
    const refused = [
      await fetchUnconfigured(`https://attacker.example/object/${root.token}/subdir`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ path: "", rights: ["read"] }),
      }),
      await fetchUnconfigured(`https://attacker.example/object/${root.token}/rpc`, { method: "POST", body: "[]" }),
      await fetchUnconfigured(`https://attacker.example/object/${root.token}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    ];
    for (const res of refused) {
      expect(res.status).toBe(503);
      expect(await errorCode(res)).toBe("unavailable");
    }
    const children = await call("GET", `/object/${root.token}/children`);
    expect(((await children.json()) as { children: unknown[] }).children).toEqual([]);
    const read = await fetchUnconfigured(`https://attacker.example/object/${root.token}/file?path=a.txt`);
    expect(read.status).toBe(200);
    expect(await read.text()).toBe("kept");
  });
});
