/**
 * `npx tsx bench/mcp-probe.ts`: MCP read_file through a cap's `/mcp` endpoint
 * (official client SDK, Streamable HTTP) against the reference filesystem
 * server over stdio, on the same 1 KiB files. A benchmark: prints, asserts nothing.
 *
 * Options: --files N (default 200), --calls N per measurement (default 400),
 * --rounds N (default 3; targets take turns each round, so load from other
 * processes on the machine falls on all of them alike), --base DIR (a second
 * checkout, e.g. the commit before a change, measured alongside this one),
 * --backend disk|r2 (default disk, as the bench's MCP rows). Every call goes
 * through the lean client; "raw tools/call" is the same call without the
 * client SDK, so the two differ by the client's own cost.
 * The stdio reference runs when `@modelcontextprotocol/server-filesystem` is
 * installed here or MCP_FS_SERVER names its `dist/index.js`.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { PROJECT_ROOT } from "../launcher/build-worker.ts";
import type { TestVault } from "../test/node/test-vault.ts";
import { lean, leanFetch, leanOk } from "./lean-http.ts";
import { groupCpuMs } from "./proc-stats.ts";

const { values } = parseArgs({
  options: {
    files: { type: "string", default: "200" },
    calls: { type: "string", default: "400" },
    rounds: { type: "string", default: "3" },
    base: { type: "string" },
    backend: { type: "string", default: "disk" },
  },
});
const FILES = Number(values.files);
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);
const IN_FLIGHT = 16;
const content = (i: number) => `${String(i).padStart(8, "0")}${"x".repeat(1016)}`;

interface Target {
  label: string;
  /** Process group whose CPU time the calls cost (the vault's launcher and workerd). */
  pgid?: number;
  /** Reads file `i`, returns its text. */
  read(i: number): Promise<string>;
  close(): Promise<void>;
}

async function mcpTarget(label: string, client: Client, pathOf: (i: number) => string): Promise<Target> {
  return {
    label,
    async read(i) {
      const result = (await client.callTool({ name: "read_file", arguments: { path: pathOf(i) } })) as {
        content: { text: string }[];
        isError?: boolean;
      };
      if (result.isError) throw new Error(`${label}: ${result.content[0]?.text}`);
      return result.content[0]!.text;
    },
    close: () => client.close(),
  };
}

/** One `tools/call` of read_file as the SDK's client sends it, with no client SDK around it. */
function rawToolCall(cap: string): (i: number) => Promise<string> {
  const headers = {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    "mcp-protocol-version": "2025-06-18",
  };
  let id = 0;
  return async (i) => {
    const call = {
      jsonrpc: "2.0",
      id: id++,
      method: "tools/call",
      params: { name: "read_file", arguments: { path: `probe/f${i}.txt` } },
    };
    const res = await leanOk(`${cap}/mcp`, { method: "POST", headers, body: JSON.stringify(call) });
    return (JSON.parse(res.body.toString()) as { result: { content: { text: string }[] } }).result.content[0]!.text;
  };
}

async function vaultTargets(tag: string, vault: TestVault): Promise<Target[]> {
  const cap = values.backend === "r2" ? vault.rootCapUrl : vault.diskCapUrl;
  for (let i = 0; i < FILES; i++) {
    const put = await lean(`${cap}/file?path=probe/f${i}.txt`, { method: "PUT", body: content(i) });
    if (put.status > 299) throw new Error(`PUT failed: ${put.status}`);
  }
  // The lean client (bench/lean-http.ts) under the SDK's transport, as in the bench's MCP rows.
  const client = new Client({ name: "mcp-probe", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${cap}/mcp`), { fetch: leanFetch }));
  return [
    { ...(await mcpTarget(`${tag} MCP read_file`, client, (i) => `probe/f${i}.txt`)), pgid: vault.pgid },
    { label: `${tag} raw tools/call`, pgid: vault.pgid, read: rawToolCall(cap), close: async () => undefined },
    {
      label: `${tag} HTTP GET /file`,
      pgid: vault.pgid,
      read: async (i) => (await leanOk(`${cap}/file?path=probe/f${i}.txt`)).body.toString(),
      close: async () => undefined,
    },
  ];
}

async function stdioTarget(dir: string): Promise<Target | null> {
  const script =
    process.env.MCP_FS_SERVER ??
    path.join(PROJECT_ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
  if (!existsSync(script)) return null;
  for (let i = 0; i < FILES; i++) await writeFile(path.join(dir, `f${i}.txt`), content(i));
  const client = new Client({ name: "mcp-probe", version: "1.0.0" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [script, dir], stderr: "ignore" }));
  return mcpTarget("stdio server-filesystem", client, (i) => path.join(dir, `f${i}.txt`));
}

async function sequential(target: Target): Promise<number[]> {
  const samples: number[] = [];
  for (let n = 0; n < CALLS; n++) {
    const i = n % FILES;
    const t0 = performance.now();
    const text = await target.read(i);
    samples.push(performance.now() - t0);
    if (text !== content(i)) throw new Error(`${target.label}: wrong content for f${i}`);
  }
  return samples;
}

/** Calls per second with IN_FLIGHT calls always outstanding. */
async function concurrent(target: Target): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < CALLS) {
        const i = next++ % FILES;
        if ((await target.read(i)) !== content(i)) throw new Error(`${target.label}: wrong content for f${i}`);
      }
    }),
  );
  return CALLS / ((performance.now() - t0) / 1000);
}

const p = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function startVault(root: string): Promise<TestVault> {
  const module = (await import(
    path.join(root, "test/node/test-vault.ts")
  )) as typeof import("../test/node/test-vault.ts");
  return module.startTestVault();
}

const vaults: TestVault[] = [];
const targets: Target[] = [];
const dir = await mkdtemp(path.join(os.tmpdir(), "mcp-probe-"));
try {
  vaults.push(await startVault(PROJECT_ROOT));
  targets.push(...(await vaultTargets("this", vaults[0]!)));
  if (values.base) {
    vaults.push(await startVault(path.resolve(values.base)));
    targets.push(...(await vaultTargets("base", vaults[1]!)));
  }
  await mkdir(dir, { recursive: true });
  const stdio = await stdioTarget(dir);
  if (stdio) targets.push(stdio);
  else console.log("(server-filesystem not installed: no stdio reference)");
  console.log(`${FILES} files of 1 KiB, ${CALLS} calls per measurement, ${ROUNDS} rounds, Node ${process.version}\n`);
  // Warm-up: first calls compile code paths and open objects.
  for (const target of targets) for (let i = 0; i < 50; i++) await target.read(i % FILES);
  const seq = new Map<Target, number[]>(targets.map((t) => [t, []]));
  const rates = new Map<Target, number[]>(targets.map((t) => [t, []]));
  const cpu = new Map<Target, number>(targets.map((t) => [t, 0]));
  // This process's own CPU per call: the client's cost (the SDK's transport and parsing), not the vault's.
  const clientCpu = new Map<Target, number>(targets.map((t) => [t, 0]));
  for (let round = 0; round < ROUNDS; round++) {
    // Each round starts with another target, so a burst of load elsewhere does not always fall on the same one.
    for (const target of [...targets.slice(round % targets.length), ...targets.slice(0, round % targets.length)]) {
      const before = target.pgid ? await groupCpuMs(target.pgid) : 0;
      const clientBefore = process.cpuUsage();
      seq.get(target)!.push(...(await sequential(target)));
      rates.get(target)!.push(await concurrent(target));
      const client = process.cpuUsage(clientBefore);
      clientCpu.set(target, clientCpu.get(target)! + (client.user + client.system) / 1000);
      if (target.pgid) cpu.set(target, cpu.get(target)! + (await groupCpuMs(target.pgid)) - before);
    }
  }
  const reference = stdio ? median(rates.get(stdio)!) : undefined;
  for (const target of targets) {
    const sorted = seq.get(target)!.sort((a, b) => a - b);
    const rate = median(rates.get(target)!);
    console.log(
      `${target.label.padEnd(26)} sequential p50 ${p(sorted, 0.5).toFixed(2)} ms  p90 ${p(sorted, 0.9).toFixed(2)} ms   ` +
        `${IN_FLIGHT} in flight ${rate.toFixed(0).padStart(5)} calls/s` +
        (reference ? ` (${(rate / reference).toFixed(2)}×)` : "") +
        (target.pgid ? `   vault CPU ${(cpu.get(target)! / (2 * CALLS * ROUNDS)).toFixed(2)} ms/call` : "") +
        `   client CPU ${(clientCpu.get(target)! / (2 * CALLS * ROUNDS)).toFixed(2)} ms/call`,
    );
  }
} finally {
  await Promise.allSettled(targets.map((t) => t.close()));
  await Promise.allSettled(vaults.map((v) => v.stop()));
  await rm(dir, { recursive: true, force: true });
}
