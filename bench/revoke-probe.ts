/**
 * `npx tsx bench/revoke-probe.ts [fanOut...]`: mints a tree (default 1 + 10 + 100) on a fresh
 * vault, then revokes its top while `strace -f -y` watches workerd, and prints the revocation's
 * time and its fsyncs per file kind (a cap's WAL, the alarm scheduler's `metadata.sqlite`, ...).
 * Counts do not depend on the machine's load; the time does (and strace slows it).
 * Linux only; strace must be installed.
 */
import { spawn } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { startTestVault } from "../test/node/test-vault.ts";
import { workerdPid } from "./proc-stats.ts";

const fanOut = process.argv.slice(2).map(Number);
const TRACE = "/tmp/capvault-revoke-probe.strace";

async function mintChild(parent: string): Promise<string> {
  const res = await fetch(`${parent}/subdir`, { method: "POST", body: "{}" });
  if (res.status !== 201) throw new Error(`mint answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { url: string }).url;
}

const vault = await startTestVault();
try {
  const top = await mintChild(vault.rootCapUrl);
  let level = [top];
  let caps = 1;
  for (const width of fanOut.length > 0 ? fanOut : [10, 10]) {
    const next: string[] = [];
    for (const parent of level) for (let i = 0; i < width; i++) next.push(await mintChild(parent));
    level = next;
    caps += next.length;
  }
  const pid = String(await workerdPid(vault.pgid));
  const tracer = spawn("strace", ["-f", "-y", "-e", "trace=fsync,fdatasync", "-o", TRACE, "-p", pid], {
    stdio: "ignore",
  });
  await new Promise((r) => setTimeout(r, 1000));
  const t0 = performance.now();
  const res = await fetch(top, { method: "DELETE" });
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 300));
  tracer.kill("SIGINT");
  await new Promise((r) => tracer.once("exit", r));
  const kinds = new Map<string, number>();
  for (const line of (await readFile(TRACE, "utf8")).split("\n")) {
    const file = /sync\(\d+<([^>]*)>/.exec(line)?.[1];
    if (file === undefined) continue;
    // A cap's files are named by a 64-hex digest: count them together.
    const kind = file.replace(/^.*\//, "").replace(/^[0-9a-f]{64}/, "<cap>");
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
  }
  await rm(TRACE, { force: true });
  console.log(`revoking ${caps} caps answered ${res.status} in ${ms.toFixed(0)} ms (under strace)`);
  for (const [kind, n] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(6)} ${kind}`);
} finally {
  await vault.stop();
}
