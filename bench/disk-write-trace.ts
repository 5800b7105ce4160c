/**
 * `npx tsx bench/disk-write-trace.ts [writes] [--strace]`: `writes` (default 200) sequential 1 KiB PUTs
 * to one file through the disk root cap on a fresh vault (state and disk folder under the OS temp dir,
 * as `npm run bench` has them). Prints the wall time per write (p50, mean) and each vault process's
 * user and system CPU per write. With `--strace`, workerd and the launcher (the disk host's Node
 * process) are both traced meanwhile (`strace -f -y`): per write, the fsync and fdatasync calls of
 * each, by file kind, and the disk host's renames, links and opens, so a change's syscalls can be
 * counted on a loaded machine, where wall times cannot be trusted. With `--profile DIR`, the launcher
 * writes a CPU profile into DIR when it stops (bench/cpu-profile-hook.mjs). Linux only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startTestVault } from "../test/node/test-vault.ts";
import { lean } from "./lean-http.ts";
import { timedCalls, workerdPid } from "./proc-stats.ts";

const writes = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 200);
const traced = process.argv.includes("--strace");
const body = "x".repeat(1024);

const profileAt = process.argv.indexOf("--profile");
const profileDir = profileAt > 0 ? path.resolve(process.argv[profileAt + 1]!) : null;
const hook = pathToFileURL(path.join(path.dirname(fileURLToPath(import.meta.url)), "cpu-profile-hook.mjs")).href;
const vault = await startTestVault(
  profileDir ? { env: { NODE_OPTIONS: `--import=${hook}`, CAPVAULT_BENCH_PROFILE_DIR: profileDir } } : {},
);
const tracers: { name: string; proc: ChildProcess; out: string }[] = [];
try {
  const url = `${vault.diskCapUrl}/file?path=${encodeURIComponent("probe/w.bin")}`;
  const put = async () => {
    const res = await lean(url, { method: "PUT", body });
    if (res.status > 299) throw new Error(`disk PUT: ${res.status} ${res.body}`);
  };
  for (let i = 0; i < 20; i++) await put();
  if (traced) {
    const targets = [
      { name: "workerd", pid: await workerdPid(vault.pgid), calls: "fsync,fdatasync" },
      { name: "launcher", pid: vault.pgid, calls: "fsync,fdatasync,rename,renameat,renameat2,link,linkat" },
    ];
    for (const { name, pid, calls } of targets) {
      const proc = spawn("strace", ["-f", "-y", "-e", `trace=${calls}`, "-p", String(pid)], {
        stdio: ["ignore", "ignore", "pipe"],
      });
      const t = { name, proc, out: "" };
      proc.stderr?.on("data", (d) => {
        t.out += String(d);
      });
      tracers.push(t);
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  console.log(await timedCalls(vault.pgid, writes, "disk writes of 1 KiB", () => put()));
} finally {
  for (const t of tracers) {
    t.proc.kill("SIGINT");
    await new Promise((r) => t.proc.once("exit", r));
    await writeFile(`/tmp/disk-write-trace-${t.name}.txt`, t.out);
    const counts = new Map<string, number>();
    for (const m of t.out.matchAll(/(\w+)\((\d+<([^>]*)>|"([^"]*)")?/g)) {
      const call = m[1]!;
      if (call === "resumed" || call === "exited" || call === "unfinished") continue;
      // Files are named by hash, inode or random temp: count by kind, not by name.
      const file = (m[3] ?? m[4] ?? "")
        .replace(/[0-9a-f]{24,}/g, "<id>")
        .replace(/\d+-\d+/g, "<dev-ino>")
        .replace(/^.*\/(?=[^/]*\/[^/]*$)/, "");
      const kind = `${call} ${file}`;
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
    }
    console.log(`${t.name}:`);
    for (const [kind, n] of [...counts].sort((a, b) => b[1] - a[1]))
      if (n >= writes / 2) console.log(`  ${(n / writes).toFixed(2)} ${kind}`);
  }
  await vault.stop();
}
