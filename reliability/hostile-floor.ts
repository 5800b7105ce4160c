import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startR2Floor } from "../bench/floor-r2.ts";
import { childPids, processCpuMs } from "../bench/proc-stats.ts";
import { type HostileRow, median, request } from "./hostile-requests.ts";

/**
 * The floor for the hostile table's 2 MiB write: the same body put straight
 * into an R2 bucket binding by a bare worker (bench/floor-worker.ts) on the
 * same runtime, no vault, while a 5-byte read on that worker is repeated and
 * timed. Locally, R2 is simulated inside workerd on one thread, so a large
 * put holds up every other request of the runtime whoever makes it; this
 * row shows how much of the vault's delay is that simulator, not the vault.
 * On Cloudflare, R2 is a service of its own and this row does not apply.
 */
export async function floorWriteDelay(bytes = 2 * 1024 * 1024): Promise<HostileRow> {
  const dir = await mkdtemp(path.join(tmpdir(), "capvault-hostile-floor-"));
  const floor = await startR2Floor(path.join(dir, "r2"), dir);
  try {
    const cheapUrl = `${floor.url}/?key=cheap.txt`;
    if ((await request("PUT", cheapUrl, "cheap")).status >= 300) throw new Error("could not write the cheap file");
    const cheapRead = async () => {
      const started = performance.now();
      const answer = await request("GET", cheapUrl);
      if (answer.status !== 200) throw new Error(`the cheap read answered ${answer.status}`);
      return performance.now() - started;
    };
    const idle: number[] = [];
    for (let i = 0; i < 15; i++) idle.push(await cheapRead());
    // The floor's workerd: this process's only workerd child (the vault's is the launcher's).
    const workerd = await childPids(process.pid, "workerd");
    let running = true;
    const cpuBefore = await processCpuMs(workerd);
    const started = performance.now();
    const put = request("PUT", `${floor.url}/?key=big.md`, "w".repeat(bytes)).finally(() => {
      running = false;
    });
    let worst = 0;
    while (running) worst = Math.max(worst, await cheapRead());
    const answer = await put;
    const ms = Math.round(performance.now() - started);
    return {
      case: `floor: ${bytes / 1024 / 1024} MiB put straight to an R2 binding, no vault (the local simulator alone)`,
      ms,
      cheapReadMaxDelayMs: Math.max(0, Math.round(worst - median(idle))),
      vaultCpuMs: (await processCpuMs(workerd)) - cpuBefore,
      outcome: answer.status < 300 ? "ok" : `HTTP ${answer.status}`,
    };
  } finally {
    await floor.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
