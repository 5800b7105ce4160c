import { type BenchContext, IN_FLIGHT } from "./bench-context.ts";
import { makeRow, type Row } from "./bench-row.ts";
import { get, mintChild, put } from "./http-ops.ts";
import { interleaved, median, sequential, throughput, timed } from "./stats.ts";

/** A cap holds at most 1,000 live children; the slack leaves room for a child minted twice by a resend. */
const FAN_OUT = 900;

/** `count` live caps under `root`: a layer of branches, each with up to {@link FAN_OUT} children. */
async function mintMany(root: string, count: number): Promise<{ caps: string[]; perSecond: number }> {
  const branches: string[] = [];
  for (let i = 0; i * FAN_OUT < count; i++) branches.push(await mintChild(root));
  const caps: string[] = [];
  const perSecond = await throughput(count, IN_FLIGHT, async (i) => {
    caps.push(await mintChild(branches[Math.floor(i / FAN_OUT)]!));
  });
  return { caps, perSecond };
}

/**
 * Many live caps: a read through whichever of them (each warmed once) vs
 * through one; then, after restarts of the vault, the first read through caps
 * not touched since, vs the warm read.
 */
export async function manyCaps(ctx: BenchContext): Promise<Row[]> {
  const { caps: count, rounds, sequential: n, restarts, coldCaps } = ctx.size;
  const root = ctx.vault.rootCapUrl;
  await put(`${root}/file?path=caps.txt`);
  const { caps, perSecond } = await mintMany(root, count);
  ctx.log(`  minted ${caps.length} caps, ${perSecond.toFixed(0)}/s`);
  const read = (cap: string) => get(`${cap}/file?path=caps.txt`);
  await throughput(caps.length, IN_FLIGHT, (i) => read(caps[i]!));
  const pick = () => caps[Math.floor(Math.random() * caps.length)]!;
  const warm = await interleaved(rounds, {
    any: async () => median(await sequential(n, () => read(pick()))),
    one: async () => median(await sequential(n, () => read(caps[0]!))),
  });

  // Caps never read since each restart, so every sample is that cap's first request.
  const unused = caps.slice(1).sort(() => Math.random() - 0.5);
  const firsts: number[] = [];
  const coldPerCap: number[] = [];
  for (let r = 0; r < restarts; r++) {
    await ctx.vault.restart();
    firsts.push(await timed(() => read(unused.pop()!)));
    for (let i = 0; i < coldCaps && unused.length > 0; i++) coldPerCap.push(await timed(() => read(unused.pop()!)));
  }
  const common = { section: "caps" };
  const label = `${caps.length.toLocaleString("en")} caps`;
  return [
    makeRow({ ...common, row: `${label}: mint a child cap, ${IN_FLIGHT} in flight`, unit: "ops/s", cap: perSecond }),
    makeRow({
      ...common,
      row: `${label}: warm read via any cap p50`,
      unit: "ms",
      cap: warm.any,
      floor: warm.one,
      floorName: "read via one cap",
    }),
    makeRow({
      ...common,
      row: "first request after a restart (median of restarts)",
      unit: "ms",
      cap: median(firsts),
      floor: warm.one,
      floorName: "warm read via one cap",
      goal: { on: "ratio", op: "<=", value: 3 },
    }),
    makeRow({
      ...common,
      row: "first read through each cap after a restart p50",
      unit: "ms",
      cap: median(coldPerCap),
      floor: warm.one,
      floorName: "warm read via one cap",
      goal: { on: "ratio", op: "<=", value: 3 },
    }),
  ];
}
