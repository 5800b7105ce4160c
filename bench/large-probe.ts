/**
 * `npx tsx bench/large-probe.ts [MiB] [rounds] [r2|disk]`: one large file up, then
 * down, through the vault and through the backend's floor, each step alone,
 * with the RSS growth of each side's processes and the CPU its workerd spent
 * (/proc utime+stime): figures that hold on a loaded machine, unlike MiB/s.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import "../test/node/fetch-setup.ts";
import { startTestVault } from "../test/node/test-vault.ts";
import { startDiskFloor } from "./floor-disk.ts";
import { startR2Floor } from "./floor-r2.ts";
import { diskEndpoints, r2Endpoints } from "./http-ops.ts";
import { download, upload } from "./large-transfer.ts";
import { childPids, groupPids, processCpuMs, rssGrowthDuring, rssMiB } from "./proc-stats.ts";

const MIB = 1024 * 1024;
const mib = Number(process.argv[2] ?? 64);
const rounds = Number(process.argv[3] ?? 1);
const backend = process.argv[4] === "disk" ? "disk" : "r2";

async function step(name: string, pids: () => Promise<number[]>, work: () => Promise<void>) {
  const before = await processCpuMs(await pids());
  const rss0 = await Promise.all((await pids()).map(async (p) => `${p}:${(await rssMiB([p])).toFixed(0)}`));
  const t0 = performance.now();
  const growth = await rssGrowthDuring(pids, work);
  const ms = performance.now() - t0;
  const cpu = (await processCpuMs(await pids())) - before;
  const each: string[] = [];
  for (const pid of await pids()) {
    const comm = (await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "?")).trim();
    each.push(`${comm}:${await processCpuMs([pid])}`);
  }
  console.log(`  cumulative cpu per process ${each.join(" ")}`);
  const rss1 = await Promise.all((await pids()).map(async (p) => `${p}:${(await rssMiB([p])).toFixed(0)}`));
  console.log(`  rss before ${rss0.join(" ")} after ${rss1.join(" ")}`);
  console.log(
    `${name.padEnd(12)} rss +${growth.toFixed(1)} MiB  cpu ${cpu} ms (${(cpu / mib).toFixed(1)} ms/MiB)  loaded ${(mib / (ms / 1000)).toFixed(1)} MiB/s`,
  );
}

const env = { CAPVAULT_MAX_FILE_BYTES: String(Math.max(2 * mib * MIB, 100 * MIB)) };
const vault = await startTestVault({ env });
const floor =
  backend === "r2"
    ? {
        ...(await startR2Floor(path.join(vault.state, "r2"), vault.state)),
        pids: () => childPids(process.pid, "workerd"),
      }
    : await (async () => {
        const disk = await startDiskFloor(vault.diskRoot);
        return { ...disk, pids: async () => [disk.pid] };
      })();
try {
  const ends = backend === "r2" ? r2Endpoints(vault.rootCapUrl, floor.url) : diskEndpoints(vault.diskCapUrl, floor.url);
  const vaultPids = () => groupPids(vault.pgid);
  const floorPids = floor.pids;
  const bytes = mib * MIB;
  for (let r = 0; r < rounds; r++) {
    await step("vault up", vaultPids, () => upload(ends.cap("probe.bin"), bytes));
    await step("floor up", floorPids, () => upload(ends.floor("probe-floor.bin"), bytes));
    await step("vault down", vaultPids, () => download(ends.cap("probe.bin"), bytes));
    await step("floor down", floorPids, () => download(ends.floor("probe-floor.bin"), bytes));
  }
} finally {
  await floor.stop();
  await vault.stop();
}
