import { groupPids, processCpuMs } from "../bench/proc-stats.ts";
import { startTestVault } from "../test/node/test-vault.ts";
import { bindingHostileRows } from "./hostile-binding.ts";
import { floorWriteDelay } from "./hostile-floor.ts";
import { type HostileRow, hostileCaseChosen, hostileRequests } from "./hostile-requests.ts";

/** The bound we hold ourselves to: one hostile request delays a cheap request on another cap by at most this. */
export const DELAY_TARGET_MS = 100;
/** And no request costs the vault more CPU than this (the cheap reads beside it included). */
export const CPU_TARGET_MS = 1000;

/**
 * Runs the hostile requests (reliability/hostile-requests.ts) against a vault
 * of their own, on R2: the hostile cap and the cheap reader's cap are two
 * children of the root. The delay is wall time, which a busy machine
 * inflates; the vault's CPU per request (all its processes, /proc) is not.
 */
export async function runHostile(log: (line: string) => void): Promise<HostileRow[]> {
  const vault = await startTestVault();
  try {
    const other = await fetch(`${vault.rootCapUrl}/subdir`, {
      method: "POST",
      body: JSON.stringify({ path: "other" }),
    });
    const otherCapUrl = ((await other.json()) as { url: string }).url;
    const onRow = (row: HostileRow) =>
      log(
        `hostile: ${row.case}: ${row.ms.toFixed(0)} ms, cheap read delayed ${row.cheapReadMaxDelayMs.toFixed(0)} ms, vault CPU ${row.vaultCpuMs ?? "?"} ms`,
      );
    // The vault's processes, listed once: one that exited mid-request would take its ticks out of the difference.
    const pids = await groupPids(vault.pgid);
    const cpuMs = () => processCpuMs(pids);
    const target = { url: vault.url, capUrl: vault.rootCapUrl, otherCapUrl, cpuMs, adminToken: vault.adminToken };
    const rows = [...(await hostileRequests(target, onRow)), ...(await bindingHostileRows(onRow))];
    if (!hostileCaseChosen("floor")) return rows;
    const floor = await floorWriteDelay();
    onRow(floor);
    return [...rows, floor];
  } finally {
    await vault.stop();
  }
}

/** One table: case, wall time, vault CPU, worst delay of the cheap read beside it, outcome, targets met. */
export function hostileTable(rows: HostileRow[]): string {
  const lines = [
    "| hostile request | ms | vault CPU (ms) | cheap read delayed (ms) | outcome | delay ≤ 100 ms | CPU ≤ 1 s |",
    "|:--|--:|--:|--:|:--|:--|:--|",
  ];
  const met = (ok: boolean) => (ok ? "yes" : "no");
  for (const r of rows) {
    const cpu = r.vaultCpuMs === null ? "—" : met(r.vaultCpuMs <= CPU_TARGET_MS);
    lines.push(
      `| ${r.case} | ${r.ms.toFixed(0)} | ${r.vaultCpuMs ?? "—"} | ${r.cheapReadMaxDelayMs.toFixed(0)} | ${r.outcome.slice(0, 60)} | ${met(r.cheapReadMaxDelayMs <= DELAY_TARGET_MS)} | ${cpu} |`,
    );
  }
  return lines.join("\n");
}
