/**
 * `capvault mcp`, the stdio bridge, in-process against the real launcher:
 * every request gets exactly one answer under its own id (even when stdin
 * closes right after it, and when the endpoint refuses the whole POST),
 * notifications get none, a revoked cap answers as the vault does
 * (`no_such_cap`) and an unreachable vault as `unavailable`, and the cap URL
 * never appears on stdout, stderr or comes from an argument. The official
 * MCP client over stdio, against the installed package, is in
 * npm-package.node.test.ts.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_LINE_BYTES } from "../../cli/mcp-bridge/run-bridge.ts";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { runInProcess } from "../cli-test-io.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

let vault: SharedVault;
let root: FsCap;

beforeAll(async () => {
  vault = await sharedVault("mcp-bridge");
  root = new FsCap(vault.rootCapUrl);
});

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
const lines = (...messages: unknown[]) =>
  messages.map((m) => (typeof m === "string" ? m : JSON.stringify(m))).join("\n") + "\n";

interface Answer {
  id: string | number | null;
  result?: { tools?: { name: string }[]; content?: { text: string }[]; isError?: boolean };
  error?: { code: number; message: string; data?: { code?: string; status?: number } };
}

/** Runs the bridge on `stdin` until it ends by itself; answers by id. */
async function bridge(stdin: string, env: Record<string, string>) {
  const run = await runInProcess(["mcp"], { env, stdin });
  const answers = run.out
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Answer);
  return { ...run, answers, byId: new Map(answers.map((a) => [a.id, a])) };
}

const tokenOf = (capUrl: string) => capUrl.split("/object/")[1]!;

describe("capvault mcp", () => {
  it("answers every request under its id, none for notifications, all before exiting when stdin closes at once", async () => {
    const run = await bridge(
      lines(
        INITIALIZE,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: "list", method: "tools/list" },
        {
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "write_file", arguments: { path: "bridge/a.md", content: "# via stdio" } },
        },
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read_file", arguments: { path: "../x" } } },
      ),
      { CAPVAULT_CAP: vault.rootCapUrl },
    );
    expect(run.code).toBe(0);
    expect(run.answers.map((a) => a.id).sort()).toEqual([0, 2, 3, "list"].sort());
    expect(run.byId.get("list")!.result!.tools!.map((t) => t.name)).toContain("read_file");
    expect(run.byId.get(2)!.result!.isError).not.toBe(true);
    expect(await root.readText("bridge/a.md")).toBe("# via stdio");
    // A tool's own refusal passes through untouched, as the endpoint gave it.
    expect(run.byId.get(3)!.result).toMatchObject({ isError: true });
    expect(run.byId.get(3)!.result!.content![0]!.text).toContain("path_escapes");
  });

  it("a line that is not JSON-RPC, or over the line limit, is a parse error; a POST refused whole answers under the request's id", async () => {
    const run = await bridge(
      lines(
        "{not json",
        // JSON, but no JSON-RPC message: the endpoint refuses it with id null, and so does the bridge.
        "5",
        `"${"x".repeat(MAX_LINE_BYTES + 10)}"`,
        // params must be an object: the endpoint refuses the POST with id null; the client waits on id 9.
        { jsonrpc: "2.0", id: 9, method: "tools/call", params: "x" },
        { jsonrpc: "2.0", id: 10, method: "ping" },
      ),
      { CAPVAULT_CAP: vault.rootCapUrl },
    );
    expect(run.code).toBe(0);
    const anonymous = run.answers.filter((a) => a.id === null);
    expect(anonymous).toHaveLength(3);
    for (const a of anonymous) expect(a.error!.code).toBe(-32700);
    expect(run.byId.get(9)!.error!.code).toBe(-32700);
    expect(run.byId.get(10)!.result).toEqual({});
  });

  it("takes the cap from --cap-file", async () => {
    const file = path.join(vault.diskRoot, "..", "cap-file");
    await writeFile(file, `${vault.rootCapUrl}\n`, { mode: 0o600 });
    const run = await runInProcess(["mcp", "--cap-file", file], {
      env: {},
      stdin: lines({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
  });

  it("a revoked cap answers each request with the vault's no_such_cap, and the bridge keeps going", async () => {
    const child = await root.subdir({ path: "bridge", rights: ["read", "list"] });
    const token = tokenOf(child.url);
    await child.revoke();
    const run = await bridge(
      lines(
        INITIALIZE,
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 1, method: "tools/list" },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_file", arguments: { path: "a.md" } } },
      ),
      { CAPVAULT_CAP: child.url },
    );
    expect(run.code).toBe(0);
    expect(run.answers.map((a) => a.id).sort()).toEqual([0, 1, 2]);
    for (const a of run.answers) {
      expect(a.error).toMatchObject({ code: -32000, data: { code: "no_such_cap", status: 404 } });
      expect(a.error!.message).toMatch(/^no_such_cap: /);
    }
    // The notification has no id to answer: its refusal goes to stderr.
    expect(run.stderr).toContain("no_such_cap");
    expect(run.out + run.stderr).not.toContain(token);
  });

  it("an unreachable vault answers each request with unavailable, never quoting the cap", async () => {
    const token = tokenOf(vault.rootCapUrl);
    // Port 9 (discard) on loopback: nothing listens there.
    const run = await bridge(lines({ jsonrpc: "2.0", id: 1, method: "tools/list" }), {
      CAPVAULT_CAP: `http://127.0.0.1:9/object/${token}`,
    });
    expect(run.code).toBe(0);
    expect(run.byId.get(1)!.error).toMatchObject({ code: -32001, data: { code: "unavailable" } });
    expect(run.out + run.stderr).not.toContain(token);
  });

  it("refuses a cap given as an argument (visible in ps) without echoing it, and sends nothing", async () => {
    let calls = 0;
    const fetch = async () => {
      calls++;
      return new Response("{}");
    };
    const withArg = await runInProcess(["mcp", vault.rootCapUrl], { env: {}, stdin: lines(INITIALIZE), fetch });
    expect(withArg.code).toBe(2);
    expect(withArg.stderr).toContain("CAPVAULT_CAP");
    expect(withArg.stderr + withArg.out).not.toContain(tokenOf(vault.rootCapUrl));
    const none = await runInProcess(["mcp"], { env: {}, stdin: lines(INITIALIZE), fetch });
    expect(none.code).toBe(2);
    expect(calls).toBe(0);
  });
});
