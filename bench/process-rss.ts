import { readdir, readFile } from "node:fs/promises";

/** `/proc/<pid>/stat` fields after the command name: state is [0], ppid [1], pgrp [2]. */
async function statFields(pid: string): Promise<string[] | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** Every process in process group `pgid` (the launcher, its workerd, anything else it started). */
export async function groupPids(pgid: number): Promise<number[]> {
  const pids: number[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    if (Number((await statFields(pid))?.[2]) === pgid) pids.push(Number(pid));
  }
  return pids;
}

/** Direct children of `ppid` running the program `name`. */
export async function childPids(ppid: number, name: string): Promise<number[]> {
  const pids: number[] = [];
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    if (Number((await statFields(pid))?.[1]) !== ppid) continue;
    const comm = await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "");
    if (comm.trim() === name) pids.push(Number(pid));
  }
  return pids;
}

/** Resident memory of `pids` together, in MiB (processes gone since are counted as 0). */
export async function rssMiB(pids: readonly number[]): Promise<number> {
  let kib = 0;
  for (const pid of pids) {
    try {
      kib += Number(/^VmRSS:\s+(\d+)/m.exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {}
  }
  return kib / 1024;
}

/**
 * Peak growth of the resident memory of `pids()` while `work` runs, over
 * their total just before it, in MiB. Sampled every 25 ms; the process list is
 * re-read at each sample, so a process started by the work counts too.
 */
export async function rssGrowthDuring(pids: () => Promise<number[]>, work: () => Promise<void>): Promise<number> {
  const idle = await rssMiB(await pids());
  let peak = idle;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, await rssMiB(await pids()));
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  try {
    await work();
  } finally {
    sampling = false;
    await sampler;
  }
  return Math.max(0, peak - idle);
}
