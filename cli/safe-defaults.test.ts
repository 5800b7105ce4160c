/**
 * Delegation defaults a newcomer cannot trip over: a revoke names its target,
 * and a share gives read + list for a week unless more is asked for.
 */
import { describe, expect, it } from "vitest";
import type { FetchLike } from "../clients/typescript/types.ts";
import { runInProcess } from "../test/cli-test-io.ts";

const CAP = `http://vault.test/object/${"a".repeat(48)}`;
const env = { CAPVAULT_CAP: CAP };

function recorder() {
  const calls: { method: string; path: string; body: unknown }[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const body = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
    calls.push({ method: init?.method ?? "GET", path: url.pathname.replace(/^\/object\/[^/]+/, ""), body });
    const answer =
      init?.method === "POST"
        ? {
            token: "c".repeat(48),
            url: `http://vault.test/object/${"c".repeat(48)}`,
            id: "k".repeat(16),
            rights: ["read"],
            expiresAt: null,
          }
        : init?.method === "DELETE"
          ? { complete: true }
          : { id: "s".repeat(16), rights: ["read"], expiresAt: null };
    return new Response(JSON.stringify(answer), {
      status: init?.method === "POST" ? 201 : 200,
      headers: { "content-type": "application/json" },
    });
  };
  return { fetch, calls };
}

describe("revoke", () => {
  it("refuses a bare revoke (the cap in CAPVAULT_CAP may be the root) and sends nothing", async () => {
    const { fetch, calls } = recorder();
    const run = await runInProcess(["revoke"], { env, fetch });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/say what to revoke: --self .* or --child ID/);
    expect(calls).toEqual([]);
  });

  it("refuses --self with --child", async () => {
    const { fetch, calls } = recorder();
    const run = await runInProcess(["revoke", "--self", "--child", "k".repeat(16)], { env, fetch });
    expect(run.code).toBe(2);
    expect(calls).toEqual([]);
  });

  it("revokes the cap itself with --self", async () => {
    const { fetch, calls } = recorder();
    const run = await runInProcess(["revoke", "--self"], { env, fetch });
    expect(run.code).toBe(0);
    expect(calls.map((c) => c.method)).toContain("DELETE");
  });
});

describe("share", () => {
  it("gives read and list for seven days by default", async () => {
    const { fetch, calls } = recorder();
    expect((await runInProcess(["share", "notes"], { env, fetch })).code).toBe(0);
    expect(calls).toEqual([
      { method: "POST", path: "/subdir", body: { path: "notes", rights: ["read", "list"], ttlSeconds: 7 * 86_400 } },
    ]);
  });

  it("gives every right of the cap and its own expiry only when asked: --rights all --ttl never", async () => {
    const { fetch, calls } = recorder();
    expect((await runInProcess(["share", "notes", "--rights", "all", "--ttl", "never"], { env, fetch })).code).toBe(0);
    expect(calls).toEqual([{ method: "POST", path: "/subdir", body: { path: "notes" } }]);
  });
});
