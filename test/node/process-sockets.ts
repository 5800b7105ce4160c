import { readdir, readFile, readlink } from "node:fs/promises";

/** One listening socket of a process group, read from /proc. */
export type ListeningSocket = { kind: "tcp"; address: string; port: number } | { kind: "unix"; path: string };

/** Pids whose process group is `pgid`; with `runningOnly`, zombies (exited, not yet reaped) are left out. */
export async function groupPids(pgid: number, runningOnly = false): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
    // Fields after "(comm) ": state, ppid, pgrp, ...
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && !(runningOnly && fields[0] === "Z")) pids.push(Number(name));
  }
  return pids;
}

/**
 * Every socket any process of the group listens on: TCP (v4 and v6) in
 * state LISTEN and Unix sockets accepting connections, matched to the
 * group by socket inode through /proc/PID/fd.
 */
export async function listeningSockets(pgid: number): Promise<ListeningSocket[]> {
  const inodes = new Set<string>();
  for (const pid of await groupPids(pgid)) {
    const fds = await readdir(`/proc/${pid}/fd`).catch(() => []);
    for (const fd of fds) {
      const m = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ""));
      if (m) inodes.add(m[1]!);
    }
  }
  const out: ListeningSocket[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of (await readFile(table, "utf8").catch(() => "")).split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // f[1] local address, f[3] state (0A = LISTEN), f[9] inode
      if (f.length < 10 || f[3] !== "0A" || !inodes.has(f[9]!)) continue;
      const [hexAddr, hexPort] = f[1]!.split(":") as [string, string];
      out.push({ kind: "tcp", address: decodeAddress(hexAddr), port: Number.parseInt(hexPort, 16) });
    }
  }
  for (const line of (await readFile("/proc/net/unix", "utf8")).split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    // f[3] flags (0x10000 = accepting connections), f[6] inode, f[7] path
    if (f.length < 8 || !inodes.has(f[6]!) || (Number.parseInt(f[3]!, 16) & 0x10000) === 0) continue;
    out.push({ kind: "unix", path: f[7]! });
  }
  return out;
}

/** /proc/net/tcp{,6} addresses: little-endian 32-bit words of hex. */
function decodeAddress(hex: string): string {
  const words = hex.match(/.{8}/g) ?? [];
  const bytes = words.flatMap((w) => (w.match(/../g) ?? []).reverse().map((b) => Number.parseInt(b, 16)));
  if (bytes.length === 4) return bytes.join(".");
  if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 255 && bytes[11] === 255)
    return bytes.slice(12).join(".");
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(":").replace(/(^|:)0(:0)+(:|$)/, "::");
}

/** True for addresses reachable only from this machine. */
export function isLoopback(address: string): boolean {
  return address.startsWith("127.") || address === "0:0:0:0:0:0:0:1" || address === "::1";
}
