/**
 * `npx tsx bench/mint-probe.ts [mints] [inFlight] [--strace | --perf]`: mints `mints` children
 * of one root cap (default 100, 1 in flight) on a fresh vault and prints the wall time per mint
 * and each vault process's user and system CPU per mint. With `--strace`, workerd is traced
 * meanwhile (`strace -f -c -w`: calls and wall time of fsync, openat, ...) and the summary is
 * printed: fsync counts do not depend on the machine's load, wall times do. With `--perf`,
 * `perf record -g` samples workerd into /tmp/mint-perf.data (native frames: SQLite, the kernel).
 * Linux only; strace and perf must be installed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { startTestVault } from "../test/node/test-vault.ts";
import { cpuByName, workerdPid } from "./proc-stats.ts";

const mints = Number(process.argv[2] ?? 100);
const inFlight = Number(process.argv[3] ?? 1);
const traced = process.argv.includes("--strace");
/** `--perf`: `perf record -g` on workerd meanwhile, into /tmp/mint-perf.data. */
const perfed = process.argv.includes("--perf");

async function mintChild(parent: string): Promise<void> {
  const res = await fetch(`${parent}/subdir`, { method: "POST", body: "{}" });
  if (res.status !== 201) throw new Error(`mint answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

const vault = await startTestVault();
let tracer: ChildProcess | null = null;
let traceOut = "";
try {
  const root = vault.rootCapUrl;
  // Warm up: the first mints compile code paths and open the parent's database.
  for (let i = 0; i < 5; i++) await mintChild(root);
  if (traced) {
    const pid = await workerdPid(vault.pgid);
    tracer = spawn(
      "strace",
      ["-f", "-c", "-w", "-e", "trace=fsync,fdatasync,openat,unlink,pwrite64,pread64", "-p", String(pid)],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    tracer.stderr?.on("data", (d) => {
      traceOut += String(d);
    });
    await new Promise((r) => setTimeout(r, 1000));
  }
  if (perfed) {
    const pid = await workerdPid(vault.pgid);
    tracer = spawn("perf", ["record", "-g", "-o", "/tmp/mint-perf.data", "-p", String(pid)], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    await new Promise((r) => setTimeout(r, 1000));
  }
  const c0 = await cpuByName(vault.pgid);
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < mints) {
      next++;
      await mintChild(root);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const wall = performance.now() - t0;
  const c1 = await cpuByName(vault.pgid);
  const per = (ms: number) => (ms / mints).toFixed(2);
  const parts = [...c1].map(([name, { user, sys }]) => {
    const before = c0.get(name) ?? { user: 0, sys: 0 };
    return `${name} user ${per(user - before.user)} sys ${per(sys - before.sys)}`;
  });
  console.log(
    `${mints} mints, ${inFlight} in flight: ${per(wall)} ms wall per mint; CPU ms per mint: ${parts.join("; ")}`,
  );
} finally {
  if (tracer) {
    tracer.kill("SIGINT");
    await new Promise((r) => tracer?.once("exit", r));
    console.log(traceOut);
  }
  await vault.stop();
}
