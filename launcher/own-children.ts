import { readdir, readFile } from "node:fs/promises";

/**
 * Ends this process's remaining children and resolves once every one has
 * exited. esbuild's service processes (the worker build's, and tsx's when its
 * cache is cold) are unref'd and quit only when they see their stdin close,
 * which is after this process is gone: exiting without this left them alive
 * beside a launcher that had already reported its exit. Linux only (/proc);
 * elsewhere it does nothing.
 */
export async function endOwnChildren(): Promise<void> {
  const children = await ownChildren();
  for (const pid of children) signal(pid, "SIGTERM");
  for (const pid of children) {
    // Bounded: a child that ignores SIGTERM is killed.
    for (let waited = 0; !(await hasExited(pid)); waited += 10) {
      if (waited === 2000) signal(pid, "SIGKILL");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

async function ownChildren(): Promise<number[]> {
  const names = await readdir("/proc").catch(() => [] as string[]);
  const pids: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const fields = await statFields(Number(name));
    // Fields after "(comm) ": state, ppid, ...
    if (fields && Number(fields[1]) === process.pid && fields[0] !== "Z") pids.push(Number(name));
  }
  return pids;
}

/** Gone, or a zombie: it has exited and only waits to be reaped. */
async function hasExited(pid: number): Promise<boolean> {
  const fields = await statFields(pid);
  return fields === null || fields[0] === "Z" || fields[0] === "X" || Number(fields[1]) !== process.pid;
}

async function statFields(pid: number): Promise<string[] | null> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  return stat === null ? null : stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {}
}
