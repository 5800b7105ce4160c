import type { BenchContext } from "./bench-context.ts";
import { IN_FLIGHT } from "./bench-context.ts";
import { type Goal, makeRow, type Row } from "./bench-row.ts";
import { type FileEndpoints, fetchGet, get, put } from "./http-ops.ts";
import { interleaved, median, sequential, throughput } from "./stats.ts";

/** A floor beside the plain one that pays one more cost the vault's design pays (see the floor's own file). */
export interface ExtraFloor {
  /** What the row is against, ending its name: `R2 write 1 KiB p50 vs the same commits`. */
  vs: string;
  floorName: string;
  url: (name: string) => string;
  goal?: Goal | null;
}

export interface SmallFileGoals {
  readP50: Goal;
  writeP50: Goal | null;
  readInFlight: Goal;
  /** Also time reads through `fetch` (undici) on both sides: what `fetch` users see. */
  fetchRead?: boolean;
  /** Write floors, each timed in the plain write's rounds: a p50 row each. */
  writeFloors?: ExtraFloor[];
  /** Read floors, each timed in the plain read's rounds: a p50 row and a 16-in-flight row each, for information. */
  readFloors?: ExtraFloor[];
}

type Variants = Record<string, () => Promise<number>>;

/**
 * 1 KiB reads and writes through a cap and through its floor, interleaved:
 * p50 of sequential reads and of sequential writes, and reads per second at 16
 * in flight. Both sides name the same files. Every variant of one
 * comparison runs in the same interleaved rounds, so their ratios share the
 * machine's load.
 */
export async function smallFileRows(
  ctx: BenchContext,
  section: string,
  label: string,
  floorName: string,
  ends: FileEndpoints,
  goals: SmallFileGoals,
): Promise<Row[]> {
  const { files, rounds, sequential: count, inFlightCalls } = ctx.size;
  const name = (i: number) => `bench/f${i % files}`;
  for (let i = 0; i < files; i++) await put(ends.cap(name(i)));
  const p50 = (url: (n: string) => string, op: (u: string) => Promise<void>) => async () =>
    median(await sequential(count, (i) => op(url(name(i)))));
  const rate = (url: (n: string) => string) => () => throughput(inFlightCalls, IN_FLIGHT, (i) => get(url(name(i))));
  const readFloors = goals.readFloors ?? [];
  const writeFloors = goals.writeFloors ?? [];

  const readVariants: Variants = { cap: p50(ends.cap, get), floor: p50(ends.floor, get) };
  if (goals.fetchRead) {
    readVariants.capFetch = p50(ends.cap, fetchGet);
    readVariants.floorFetch = p50(ends.floor, fetchGet);
  }
  for (const [i, extra] of readFloors.entries()) readVariants[`extra${i}`] = p50(extra.url, get);
  const read = await interleaved(rounds, readVariants);
  const writeVariants: Variants = { cap: p50(ends.cap, (u) => put(u)), floor: p50(ends.floor, (u) => put(u)) };
  for (const [i, extra] of writeFloors.entries()) writeVariants[`extra${i}`] = p50(extra.url, (u) => put(u));
  const write = await interleaved(rounds, writeVariants);
  const manyVariants: Variants = { cap: rate(ends.cap), floor: rate(ends.floor) };
  for (const [i, extra] of readFloors.entries()) manyVariants[`extra${i}`] = rate(extra.url);
  const many = await interleaved(rounds, manyVariants);

  const common = { section, floorName };
  const rows = [
    makeRow({
      ...common,
      row: `${label} read 1 KiB p50`,
      unit: "ms",
      cap: read.cap!,
      floor: read.floor!,
      goal: goals.readP50,
    }),
    makeRow({
      ...common,
      row: `${label} write 1 KiB p50`,
      unit: "ms",
      cap: write.cap!,
      floor: write.floor!,
      goal: goals.writeP50,
    }),
    makeRow({
      ...common,
      row: `${label} read 1 KiB, ${IN_FLIGHT} in flight`,
      unit: "ops/s",
      cap: many.cap!,
      floor: many.floor!,
      goal: goals.readInFlight,
    }),
  ];
  if (goals.fetchRead)
    rows.push(
      makeRow({
        ...common,
        row: `${label} read 1 KiB p50, fetch client`,
        unit: "ms",
        cap: read.capFetch!,
        floor: read.floorFetch!,
        floorName: `${floorName}, fetch`,
      }),
    );
  for (const [i, extra] of writeFloors.entries())
    rows.push(
      makeRow({
        section,
        row: `${label} write 1 KiB p50 ${extra.vs}`,
        unit: "ms",
        cap: write.cap!,
        floor: write[`extra${i}`]!,
        floorName: extra.floorName,
        goal: extra.goal ?? null,
      }),
    );
  for (const [i, extra] of readFloors.entries()) {
    const spec = { section, floorName: extra.floorName };
    rows.push(
      makeRow({
        ...spec,
        row: `${label} read 1 KiB p50 ${extra.vs}`,
        unit: "ms",
        cap: read.cap!,
        floor: read[`extra${i}`]!,
      }),
      makeRow({
        ...spec,
        row: `${label} read 1 KiB, ${IN_FLIGHT} in flight ${extra.vs}`,
        unit: "ops/s",
        cap: many.cap!,
        floor: many[`extra${i}`]!,
      }),
    );
  }
  return rows;
}
