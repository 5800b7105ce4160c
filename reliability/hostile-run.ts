import { startTestVault } from "../test/node/test-vault.ts";
import { floorWriteDelay } from "./hostile-floor.ts";
import { type HostileRow, hostileCaseChosen, hostileRequests } from "./hostile-requests.ts";

/** The bound we hold ourselves to: one hostile request delays a cheap request on another cap by at most this. */
export const DELAY_TARGET_MS = 100;

/**
 * Runs the hostile requests (reliability/hostile-requests.ts) against a vault
 * of their own, on R2: the hostile cap and the cheap reader's cap are two
 * children of the root. A measurement: wall time, not CPU time, so a busy
 * machine inflates it.
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
      log(`hostile: ${row.case}: ${row.ms.toFixed(0)} ms, cheap read delayed ${row.cheapReadMaxDelayMs.toFixed(0)} ms`);
    const rows = await hostileRequests({ url: vault.url, capUrl: vault.rootCapUrl, otherCapUrl }, onRow);
    if (!hostileCaseChosen("floor")) return rows;
    const floor = await floorWriteDelay();
    onRow(floor);
    return [...rows, floor];
  } finally {
    await vault.stop();
  }
}

/** One table: case, wall time, worst delay of the cheap read beside it, outcome, target met. */
export function hostileTable(rows: HostileRow[]): string {
  const lines = [
    "| hostile request | ms | cheap read delayed (ms) | outcome | delay ≤ 100 ms |",
    "|:--|--:|--:|:--|:--|",
  ];
  for (const r of rows) {
    lines.push(
      `| ${r.case} | ${r.ms.toFixed(0)} | ${r.cheapReadMaxDelayMs.toFixed(0)} | ${r.outcome.slice(0, 60)} | ${r.cheapReadMaxDelayMs <= DELAY_TARGET_MS ? "yes" : "no"} |`,
    );
  }
  return lines.join("\n");
}
