/**
 * What the bench and the reliability runs read of the vault's processes from
 * `/proc`: who they are, their CPU time and their resident memory. CPU is in
 * ms at the kernel's 10 ms tick (USER_HZ is 100 on Linux).
 */
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

/**
 * CPU time (user + system) spent so far by the processes of group `pgid`, in
 * ms, at the kernel's 10 ms tick: the work a request cost the vault, which a
 * loaded machine does not inflate as it does wall time.
 */
export async function groupCpuMs(pgid: number): Promise<number> {
  return processCpuMs(await groupPids(pgid));
}

/** CPU time of `pids` together so far, in ms (processes gone since count as 0). */
export async function processCpuMs(pids: readonly number[]): Promise<number> {
  let ticks = 0;
  for (const pid of pids) {
    const f = await statFields(String(pid));
    // utime and stime are fields 14 and 15 of the line, [11] and [12] here.
    if (f) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}

/** User and system CPU (ms) of each process in `pgid`, summed by command name (`workerd`, `node`). */
export async function cpuByName(pgid: number): Promise<Map<string, { user: number; sys: number }>> {
  const out = new Map<string, { user: number; sys: number }>();
  for (const pid of await groupPids(pgid)) {
    const f = await statFields(String(pid));
    if (!f) continue;
    const name = (await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "?")).trim();
    const had = out.get(name) ?? { user: 0, sys: 0 };
    out.set(name, { user: had.user + Number(f[11]) * 10, sys: had.sys + Number(f[12]) * 10 });
  }
  return out;
}

/** The workerd process of the vault whose launcher leads group `pgid`. */
export async function workerdPid(pgid: number): Promise<number> {
  for (const pid of await groupPids(pgid)) {
    const comm = await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "");
    if (comm.trim() === "workerd") return pid;
  }
  throw new Error("no workerd in the vault's process group");
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
  return (await growthDuring(async () => ({ rss: await rssMiB(await pids()) }), work)).rss ?? 0;
}

/**
 * Runs `work` while reading `sample` every 25 ms, and returns how far each of
 * its figures rose above its value just before (peak minus idle, never below 0).
 */
export async function growthDuring(
  sample: () => Promise<Record<string, number>>,
  work: () => Promise<void>,
): Promise<Record<string, number>> {
  const idle = await sample();
  const peak = { ...idle };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      for (const [name, value] of Object.entries(await sample())) peak[name] = Math.max(peak[name] ?? 0, value);
      await new Promise((r) => setTimeout(r, 25));
    }
  })();
  try {
    await work();
  } finally {
    sampling = false;
    await sampler;
  }
  return Object.fromEntries(
    Object.entries(peak).map(([name, value]) => [name, Math.max(0, value - (idle[name] ?? 0))]),
  );
}

/**
 * Runs `call` `count` times one after the other and returns a line: its p50
 * and mean wall time and, per process name in `pgid`, the user and system
 * CPU per call. Each call's CPU is read from /proc, so it holds on a loaded
 * machine where the wall time does not.
 */
export async function timedCalls(
  pgid: number,
  count: number,
  label: string,
  call: () => Promise<void>,
): Promise<string> {
  const c0 = await cpuByName(pgid);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await call();
    times.push(performance.now() - t);
  }
  const c1 = await cpuByName(pgid);
  const per = (ms: number) => (ms / count).toFixed(2);
  const parts = [...c1].map(([name, { user, sys }]) => {
    const before = c0.get(name) ?? { user: 0, sys: 0 };
    return `${name} user ${per(user - before.user)} sys ${per(sys - before.sys)}`;
  });
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / count;
  return `${count} ${label}: p50 ${times[count >> 1]!.toFixed(2)} ms, mean ${mean.toFixed(2)} ms; CPU ms per write: ${parts.join("; ")}`;
}
