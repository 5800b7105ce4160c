import type { BenchContext } from "./bench-context.ts";
import type { Row } from "./bench-row.ts";
import { revocationTree } from "./revocation-tree.ts";

/**
 * The revocation tree (bench/revocation-tree.ts) as a section: 1 + 10 + 100
 * + 1,000 caps at full size, 1 + 2 + 4 + 8 at tiny size (minting a thousand
 * caps is most of a minute on a busy machine, too long for CI's tiny run).
 */
export async function revocation(ctx: BenchContext): Promise<Row[]> {
  const fanOut = ctx.size.name === "full" ? [10, 10, 10] : [2, 2, 2];
  const rows = await revocationTree(
    { url: ctx.vault.url, adminToken: ctx.vault.adminToken, pgid: ctx.vault.pgid },
    { fanOut },
  );
  return rows.map((r) => ({
    section: "revocation",
    row: r.row,
    unit: r.unit,
    cap: r.value,
    floor: r.floor?.value ?? null,
    floorName: r.floor?.name ?? null,
    // A floor of 0 (CPU ticks are 10 ms; a tiny tree can take none) has no ratio, as in makeRow.
    ratio: r.floor && r.floor.value > 0 ? r.value / r.floor.value : null,
    target: r.target,
    met: r.met,
  }));
}
