/**
 * `npm run bench`: throughput, latency and memory of a real launcher on this
 * machine. A benchmark, not a test: it prints figures and asserts nothing.
 *
 * What it checks in passing: that a 64 MiB transfer does not make the runtime
 * hold the file in memory (peak RSS of workerd during the transfer vs idle).
 */
import { readdir, readFile } from "node:fs/promises";
import { startTestVault } from "../test/node/test-vault.ts";

const SMALL_FILES = 300;
const BIG = 64 * 1024 * 1024;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(label: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const total = samples.reduce((a, b) => a + b, 0);
  return `${label.padEnd(28)} ${(samples.length / (total / 1000)).toFixed(0).padStart(6)} ops/s   p50 ${percentile(sorted, 50).toFixed(1)} ms   p99 ${percentile(sorted, 99).toFixed(1)} ms`;
}

/** Resident memory of the vault's workerd process(es), in MiB. */
async function workerdRssMiB(pgid: number): Promise<number> {
  let total = 0;
  for (const pid of await readdir("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const status = await readFile(`/proc/${pid}/status`, "utf8");
      if (!/^Name:\s+workerd$/m.test(status)) continue;
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]) !== pgid) continue;
      total += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0) / 1024;
    } catch {}
  }
  return total;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function bigTransfer(cap: string, label: string, pgid: number): Promise<void> {
  const idle = await workerdRssMiB(pgid);
  let peak = idle;
  const sampler = setInterval(async () => {
    peak = Math.max(peak, await workerdRssMiB(pgid));
  }, 50);
  const chunk = new Uint8Array(1024 * 1024).fill(7);
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= BIG) return c.close();
      sent += chunk.length;
      c.enqueue(chunk);
    },
  });
  const up = await timed(async () => {
    const res = await fetch(`${cap}/file?path=big.bin`, {
      method: "PUT",
      body,
      headers: { "content-length": String(BIG) },
      duplex: "half",
    } as RequestInit);
    if (!res.ok) throw new Error(`upload failed: ${res.status}`);
    await res.arrayBuffer();
  });
  const down = await timed(async () => {
    const res = await fetch(`${cap}/file?path=big.bin`);
    let n = 0;
    for await (const piece of res.body as unknown as AsyncIterable<Uint8Array>) n += piece.length;
    if (n !== BIG) throw new Error("short read");
  });
  clearInterval(sampler);
  const mib = BIG / 1024 / 1024;
  console.log(
    `${`${label} 64 MiB`.padEnd(28)} up ${(mib / (up / 1000)).toFixed(0)} MiB/s   down ${(mib / (down / 1000)).toFixed(0)} MiB/s   workerd RSS idle ${idle.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB`,
  );
}

const vault = await startTestVault();
try {
  console.log(
    `capvault bench: ${SMALL_FILES} small files per backend, then a 64 MiB round trip (Node ${process.version})\n`,
  );
  for (const [label, cap] of [
    ["r2", vault.rootCapUrl],
    ["disk", vault.diskCapUrl],
  ] as const) {
    const writes: number[] = [];
    const reads: number[] = [];
    for (let i = 0; i < SMALL_FILES; i++) {
      writes.push(
        await timed(async () =>
          (await fetch(`${cap}/file?path=small/f${i}`, { method: "PUT", body: "x".repeat(1024) })).arrayBuffer(),
        ),
      );
    }
    for (let i = 0; i < SMALL_FILES; i++) {
      reads.push(await timed(async () => (await fetch(`${cap}/file?path=small/f${i}`)).arrayBuffer()));
    }
    const list = await timed(async () => (await fetch(`${cap}/list?path=small`)).json());
    console.log(summary(`${label} write 1 KiB`, writes));
    console.log(summary(`${label} read 1 KiB`, reads));
    console.log(`${`${label} list ${SMALL_FILES}`.padEnd(28)} ${list.toFixed(1)} ms`);
    await bigTransfer(cap, label, vault.pgid);
  }

  const mints: number[] = [];
  const subs: string[] = [];
  for (let i = 0; i < 100; i++) {
    mints.push(
      await timed(async () => {
        const res = await fetch(`${vault.rootCapUrl}/subdir`, {
          method: "POST",
          body: JSON.stringify({ path: `t${i}` }),
        });
        subs.push(((await res.json()) as { url: string }).url);
      }),
    );
  }
  console.log(summary("subdir (mint child)", mints));
  const parent = subs[0]!;
  const tree: string[] = [parent];
  for (let depth = 0; depth < 3; depth++) {
    const next: string[] = [];
    for (const url of tree.slice(-(3 ** depth))) {
      for (let k = 0; k < 3; k++) {
        const res = await fetch(`${url}/subdir`, { method: "POST", body: JSON.stringify({ path: "" }) });
        next.push(((await res.json()) as { url: string }).url);
      }
    }
    tree.push(...next);
  }
  const revoke = await timed(() => fetch(parent, { method: "DELETE" }));
  console.log(`${`revoke tree of ${tree.length}`.padEnd(28)} ${revoke.toFixed(1)} ms`);
} finally {
  await vault.stop();
}
