/**
 * `npx tsx bench/ab-probe.ts --base DIR [--ops mcp,get,get-r2,put-r2,put-disk] [--batches 20] [--calls 50]`:
 * this checkout against a second one (DIR, e.g. `git archive` of the commit before a change, with
 * node_modules linked), each on a vault of its own, in small batches that alternate between the two
 * (this, base, base, this, …), so a burst of load elsewhere falls on both alike. Per op and side: the
 * median over batches of the vault's CPU per call (its process group from /proc, and its Node process,
 * the disk host, alone) and of the batch's
 * p50, and the median of the per-batch-pair ratios this ÷ base. On a loaded machine the CPU figures are
 * the ones to read. A benchmark: prints, asserts nothing.
 */
import path from "node:path";
import { parseArgs } from "node:util";
import { PROJECT_ROOT } from "../launcher/build-worker.ts";
import type { TestVault } from "../test/node/test-vault.ts";
import { lean, leanOk } from "./lean-http.ts";
import { cpuByName } from "./proc-stats.ts";

const { values } = parseArgs({
  options: {
    base: { type: "string" },
    ops: { type: "string", default: "mcp,get" },
    batches: { type: "string", default: "20" },
    calls: { type: "string", default: "50" },
  },
});
if (!values.base) throw new Error("--base DIR is required");
const BATCHES = Number(values.batches);
const CALLS = Number(values.calls);
const FILES = 16;
const body = (i: number) => `${String(i).padStart(8, "0")}${"x".repeat(1016)}`;
const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
  "mcp-protocol-version": "2025-06-18",
};

type Op = (i: number) => Promise<void>;

/** Each op of `vault`: one call, checked (a broken path cannot pass for a fast one). */
async function opsOf(vault: TestVault): Promise<Record<string, Op>> {
  const disk = vault.diskCapUrl;
  const r2 = vault.rootCapUrl;
  for (let i = 0; i < FILES; i++) await leanOk(`${disk}/file?path=ab/f${i}.txt`, { method: "PUT", body: body(i) });
  for (let i = 0; i < FILES; i++) await leanOk(`${r2}/file?path=ab/f${i}.txt`, { method: "PUT", body: body(i) });
  let id = 0;
  return {
    async mcp(i) {
      const params = { name: "read_file", arguments: { path: `ab/f${i % FILES}.txt` } };
      const call = JSON.stringify({ jsonrpc: "2.0", id: id++, method: "tools/call", params });
      const res = await leanOk(`${disk}/mcp`, { method: "POST", headers: MCP_HEADERS, body: call });
      const text = (JSON.parse(res.body.toString()) as { result: { content: { text: string }[] } }).result.content[0]
        ?.text;
      if (text !== body(i % FILES)) throw new Error("mcp read_file: wrong text");
    },
    async get(i) {
      const res = await leanOk(`${disk}/file?path=ab/f${i % FILES}.txt`);
      if (res.body.toString() !== body(i % FILES)) throw new Error("GET /file: wrong body");
    },
    async "get-r2"(i) {
      const res = await leanOk(`${r2}/file?path=ab/f${i % FILES}.txt`);
      if (res.body.toString() !== body(i % FILES)) throw new Error("R2 GET /file: wrong body");
    },
    async "put-r2"(i) {
      const res = await lean(`${r2}/file?path=ab/w${i % FILES}.bin`, { method: "PUT", body: body(i) });
      if (res.status > 299) throw new Error(`R2 PUT: ${res.status} ${res.body}`);
    },
    async "put-disk"(i) {
      const res = await lean(`${disk}/file?path=ab/w${i % FILES}.bin`, { method: "PUT", body: body(i) });
      if (res.status > 299) throw new Error(`disk PUT: ${res.status} ${res.body}`);
    },
  };
}

async function startVault(root: string): Promise<TestVault> {
  const module = (await import(
    path.join(root, "test/node/test-vault.ts")
  )) as typeof import("../test/node/test-vault.ts");
  return module.startTestVault();
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The vault's CPU so far, ms: all of it, and the launcher's Node process (the disk host) alone. */
async function cpuNow(vault: TestVault): Promise<{ all: number; node: number }> {
  let all = 0;
  for (const { user, sys } of (await cpuByName(vault.pgid)).values()) all += user + sys;
  const node = (await cpuByName(vault.pgid)).get("node");
  return { all, node: node ? node.user + node.sys : 0 };
}

interface Batch {
  cpu: number;
  node: number;
  p50: number;
}

/** One batch: CPU ms per call of the vault's group and of its Node process, and the batch's p50 in ms. */
async function batch(vault: TestVault, op: Op, from: number): Promise<Batch> {
  const times: number[] = [];
  const before = await cpuNow(vault);
  for (let i = from; i < from + CALLS; i++) {
    const t0 = performance.now();
    await op(i);
    times.push(performance.now() - t0);
  }
  const after = await cpuNow(vault);
  return { cpu: (after.all - before.all) / CALLS, node: (after.node - before.node) / CALLS, p50: median(times) };
}

const sides: { label: string; vault: TestVault; ops: Record<string, Op> }[] = [];
try {
  for (const [label, root] of [
    ["this", PROJECT_ROOT],
    ["base", path.resolve(values.base)],
  ] as const) {
    const vault = await startVault(root);
    sides.push({ label, vault, ops: await opsOf(vault) });
  }
  console.log(`${BATCHES} batches of ${CALLS} calls per op and side, alternating; Node ${process.version}\n`);
  for (const name of values.ops.split(",")) {
    for (const side of sides) for (let i = 0; i < 30; i++) await side.ops[name]!(i);
    const got = sides.map(() => ({ cpu: [] as number[], node: [] as number[], p50: [] as number[] }));
    const cpuRatio: number[] = [];
    const p50Ratio: number[] = [];
    for (let b = 0; b < BATCHES; b++) {
      const order = b % 2 === 0 ? [0, 1] : [1, 0];
      const round: Batch[] = [];
      for (const s of order) round[s] = await batch(sides[s]!.vault, sides[s]!.ops[name]!, b * CALLS);
      for (const s of [0, 1]) {
        got[s]!.cpu.push(round[s]!.cpu);
        got[s]!.node.push(round[s]!.node);
        got[s]!.p50.push(round[s]!.p50);
      }
      cpuRatio.push(round[0]!.cpu / round[1]!.cpu);
      p50Ratio.push(round[0]!.p50 / round[1]!.p50);
    }
    const line = (s: number) =>
      `${sides[s]!.label}: CPU ${median(got[s]!.cpu).toFixed(2)} (node ${median(got[s]!.node).toFixed(2)}) ms/call, p50 ${median(got[s]!.p50).toFixed(2)} ms`;
    console.log(
      `${name.padEnd(9)} ${line(0)} | ${line(1)} | this/base: CPU ${median(cpuRatio).toFixed(2)}×, p50 ${median(p50Ratio).toFixed(2)}×`,
    );
  }
} finally {
  await Promise.allSettled(sides.map((s) => s.vault.stop()));
}
