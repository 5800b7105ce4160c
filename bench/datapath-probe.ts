/**
 * A probe for the file data path (not wired into npm test or npm run bench):
 * 1 KiB read/write p50 and 16-in-flight throughput through a cap, on R2 and
 * on disk, against floors measured in the same run: a minimal worker on
 * Miniflare reading and writing its R2 binding directly, and a plain Node
 * HTTP server doing fs.readFile / fs.writeFile. Calls go through the lean
 * keep-alive client (lean-http.ts).
 *
 *   node --import tsx bench/datapath-probe.ts [rounds]
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import os from "node:os";
import path from "node:path";
import { Miniflare } from "miniflare";
import { startTestVault } from "../test/node/test-vault.ts";
import { leanOk } from "./lean-http.ts";
import { cpuByName } from "./proc-stats.ts";

const N = Number(process.env.PROBE_N ?? 200);
const BODY = new Uint8Array(1024).fill(65);

const FLOOR_WORKER = `export default { async fetch(req, env) {
  const key = new URL(req.url).searchParams.get("path");
  if (req.method === "PUT") { const o = await env.BUCKET.put(key, req.body); return Response.json({ etag: o.etag }); }
  const o = await env.BUCKET.get(key);
  return o ? new Response(o.body, { headers: { etag: o.httpEtag } }) : new Response("no", { status: 404 });
} };`;

async function nodeFloor(dir: string): Promise<{ url: string; close(): void }> {
  const server = createServer(async (req, res) => {
    try {
      const name = path.join(dir, new URL(req.url!, "http://x").searchParams.get("path")!);
      if (req.method === "PUT") {
        const parts: Buffer[] = [];
        for await (const p of req) parts.push(p as Buffer);
        await writeFile(name, Buffer.concat(parts));
        res.end("{}");
      } else res.end(await readFile(name));
    } catch {
      res.statusCode = 500;
      res.end();
    }
  });
  // Longer than any pause of a loaded machine: else a kept-alive socket is closed as the client reuses it.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}

async function once(base: string, op: "read" | "write", i: number): Promise<void> {
  const url = `${base}/file?path=${op === "read" ? "probe.bin" : `w${i % 16}.bin`}`;
  await leanOk(url, op === "read" ? {} : { method: "PUT", body: BODY, headers: { "content-type": "x/y" } });
}

/** CPU seconds (user+sys) of the vault's processes, by process name: where a request's work is done, load or not. */
async function groupCpu(pgid: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, { user, sys }] of await cpuByName(pgid)) out[name] = (user + sys) / 1000;
  return out;
}

async function p50(base: string, op: "read" | "write"): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await once(base, op, i);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(N / 2)]!;
}

async function parallel(base: string, op: "read" | "write"): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < N * 2) await once(base, op, next++);
    }),
  );
  return (N * 2) / ((performance.now() - t0) / 1000);
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 2);
  const self = await readFile("/proc/self/stat", "utf8");
  const ownGroup = Number(self.slice(self.lastIndexOf(")") + 2).split(" ")[2]);
  const vault = await startTestVault();
  // PROBE_BEFORE=<an export of an older commit, its node_modules linked>: the
  // same probe against that code too, interleaved with this one's in each round.
  const beforeRoot = process.env.PROBE_BEFORE;
  const older = beforeRoot
    ? await (
        (await import(path.join(beforeRoot, "test/node/test-vault.ts"))) as { startTestVault: typeof startTestVault }
      ).startTestVault()
    : null;
  const floorDir = await mkdtemp(path.join(os.tmpdir(), "capvault-floor-"));
  const node = await nodeFloor(floorDir);
  const mf = new Miniflare({
    modules: true,
    script: FLOOR_WORKER,
    r2Buckets: ["BUCKET"],
    r2Persist: path.join(floorDir, "r2"),
    compatibilityDate: "2025-01-01",
  });
  const r2Floor = (await mf.ready).origin.replace(/\/$/, "");
  const targets: [string, string][] = [
    ["r2 cap", vault.rootCapUrl],
    ["r2 floor", r2Floor],
    ["disk cap", vault.diskCapUrl],
    ["disk floor", node.url],
  ];
  if (older) targets.push(["r2 cap before", older.rootCapUrl], ["disk cap before", older.diskCapUrl]);
  try {
    for (const [, base] of targets) await once(base, "write", 0).then(() => fetchPut(base));
    const rows = new Map<string, number[][]>();
    for (let round = 0; round < rounds; round++) {
      for (const [label, base] of targets) {
        const row = [
          await p50(base, "read"),
          await p50(base, "write"),
          await parallel(base, "read"),
          await parallel(base, "write"),
        ];
        rows.set(label, [...(rows.get(label) ?? []), row]);
        // The floor worker's workerd runs in this process's own group (the vault's is detached).
        const group = label.endsWith("cap")
          ? vault.pgid
          : label.endsWith("before")
            ? older!.pgid
            : label === "r2 floor"
              ? ownGroup
              : null;
        if (group !== null) {
          for (const op of ["read", "write"] as const) {
            const pick = (all: Record<string, number>) => (group === ownGroup ? { workerd: all.workerd ?? 0 } : all);
            const before = pick(await groupCpu(group));
            await parallel(base, op);
            const after = pick(await groupCpu(group));
            const per = Object.keys(after)
              .map((k) => `${k} ${(((after[k]! - (before[k] ?? 0)) * 1000) / (N * 2)).toFixed(2)}`)
              .join(", ");
            console.log(`${label} ${op}: CPU ms/op: ${per}`);
          }
        }
      }
    }
    console.log("target        read p50   write p50   16x read/s   16x write/s   (median over rounds)");
    const med = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const summary = new Map<string, number[]>();
    for (const [label, all] of rows) {
      const m = [0, 1, 2, 3].map((k) => med(all.map((r) => r[k]!)));
      summary.set(label, m);
      console.log(
        `${label.padEnd(16)} ${m[0]!.toFixed(2).padStart(8)} ${m[1]!.toFixed(2).padStart(10)} ${m[2]!.toFixed(0).padStart(12)} ${m[3]!.toFixed(0).padStart(13)}`,
      );
    }
    const ratios = [
      ["r2 cap", "r2"],
      ["disk cap", "disk"],
    ];
    if (older) ratios.push(["r2 cap before", "r2"], ["disk cap before", "disk"]);
    for (const [label, b] of ratios) {
      const c = summary.get(label!)!;
      const f = summary.get(`${b} floor`)!;
      console.log(
        `${label} / floor: read ${(c[0]! / f[0]!).toFixed(2)}x  write ${(c[1]! / f[1]!).toFixed(2)}x  16x read ${(c[2]! / f[2]!).toFixed(2)}  16x write ${(c[3]! / f[3]!).toFixed(2)}`,
      );
    }
  } finally {
    await mf.dispose();
    node.close();
    await vault.stop();
    await older?.stop();
    await rm(floorDir, { recursive: true, force: true });
  }
}

async function fetchPut(base: string): Promise<void> {
  const res = await fetch(`${base}/file?path=probe.bin`, { method: "PUT", body: BODY });
  if (!res.ok) throw new Error(`seed ${res.status}`);
  await res.arrayBuffer();
}

await main();
