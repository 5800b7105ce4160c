/**
 * `npx tsx bench/write-probe.ts [writes] [kib] [--strace]`: `writes` sequential PUTs of `kib` KiB
 * (default 200 of 1) to one file through the root R2 cap on a fresh vault; prints the wall time
 * per write (median and mean) and each vault process's user and system CPU per write. With
 * `--strace`, workerd is traced meanwhile (`strace -f -c -w`) and the summary printed: fsync counts
 * per write do not depend on the machine's load, wall times do. Linux only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { startTestVault } from "../test/node/test-vault.ts";
import { cpuByName, workerdPid } from "./proc-stats.ts";

const writes = Number(process.argv[2] ?? 200);
const kib = Number(process.argv[3] ?? 1);
const traced = process.argv.includes("--strace");
/** `--files`: which files workerd fsyncs, counted by path (strace -y), instead of the summary. */
const byFile = process.argv.includes("--files");

const body = new Uint8Array(kib * 1024).fill(120);
async function put(url: string): Promise<void> {
  const res = await fetch(url, { method: "PUT", body });
  if (res.status >= 300) throw new Error(`write answered ${res.status}: ${await res.text()}`);
  await res.arrayBuffer();
}

const vault = await startTestVault();
let tracer: ChildProcess | null = null;
let traceOut = "";
try {
  const url = `${vault.rootCapUrl}/file?path=${encodeURIComponent("probe/w.bin")}`;
  for (let i = 0; i < 10; i++) await put(url);
  if (traced || byFile) {
    const pid = await workerdPid(vault.pgid);
    const mode = byFile
      ? ["-y", "-tt", "-T", "-e", "trace=fsync,fdatasync"]
      : ["-c", "-w", "-e", "trace=fsync,fdatasync,pwrite64"];
    tracer = spawn("strace", ["-f", ...mode, "-p", String(pid)], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    tracer.stderr?.on("data", (d) => {
      traceOut += String(d);
    });
    await new Promise((r) => setTimeout(r, 1000));
  }
  const c0 = await cpuByName(vault.pgid);
  const times: number[] = [];
  for (let i = 0; i < writes; i++) {
    const t = performance.now();
    await put(url);
    times.push(performance.now() - t);
  }
  const c1 = await cpuByName(vault.pgid);
  const per = (ms: number) => (ms / writes).toFixed(2);
  const parts = [...c1].map(([name, { user, sys }]) => {
    const before = c0.get(name) ?? { user: 0, sys: 0 };
    return `${name} user ${per(user - before.user)} sys ${per(sys - before.sys)}`;
  });
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / writes;
  console.log(
    `${writes} writes of ${kib} KiB: p50 ${times[writes >> 1]!.toFixed(2)} ms, mean ${mean.toFixed(2)} ms; CPU ms per write: ${parts.join("; ")}`,
  );
} finally {
  if (tracer) {
    tracer.kill("SIGINT");
    await new Promise((r) => tracer?.once("exit", r));
    if (!byFile) console.log(traceOut);
    else {
      // The raw trace, with times: whether two objects' fsyncs overlap shows what runs at once.
      await writeFile("/tmp/write-probe-trace.txt", traceOut);
      const counts = new Map<string, number>();
      for (const m of traceOut.matchAll(/fsync\(\d+<([^>]*)>/g)) {
        // Object files are named by hash: count by kind (folder and suffix), not by name.
        const kind = m[1]!.replace(/[0-9a-f]{64}/g, "<id>").replace(/^.*\/(?=[^/]*\/[^/]*$)/, "");
        counts.set(kind, (counts.get(kind) ?? 0) + 1);
      }
      for (const [kind, n] of [...counts].sort((a, b) => b[1] - a[1]))
        console.log(`${(n / writes).toFixed(2)} ${kind}`);
    }
  }
  await vault.stop();
}
