import type { BenchContext } from "./bench-context.ts";
import { makeRow, type Row } from "./bench-row.ts";
import { get, mintChild, put } from "./http-ops.ts";
import { interleaved, median, sequential } from "./stats.ts";

/** A read through a cap `depth` delegations below the root vs one delegation below, same file. */
export async function depth(ctx: BenchContext): Promise<Row[]> {
  const root = ctx.vault.rootCapUrl;
  await put(`${root}/file?path=depth.txt`);
  const chain = [await mintChild(root)];
  while (chain.length < ctx.size.depth) chain.push(await mintChild(chain.at(-1)!));
  const p50 = (cap: string) => async () =>
    median(await sequential(ctx.size.sequential, () => get(`${cap}/file?path=depth.txt`)));
  const t = await interleaved(ctx.size.rounds, { deep: p50(chain.at(-1)!), shallow: p50(chain[0]!) });
  return [
    makeRow({
      section: "depth",
      row: `depth-${chain.length} ÷ depth-1 read p50`,
      unit: "ms",
      cap: t.deep,
      floor: t.shallow,
      floorName: "depth-1 cap",
      goal: { on: "ratio", op: "<=", value: 1.05 },
    }),
  ];
}
