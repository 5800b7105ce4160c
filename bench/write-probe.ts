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
import { timedCalls, workerdPid } from "./proc-stats.ts";

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
  console.log(await timedCalls(vault.pgid, writes, `writes of ${kib} KiB`, () => put(url)));
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
