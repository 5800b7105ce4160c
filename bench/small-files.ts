import type { BenchContext } from "./bench-context.ts";
import { IN_FLIGHT } from "./bench-context.ts";
import { type Goal, makeRow, type Row } from "./bench-row.ts";
import { type FileEndpoints, fetchGet, get, put } from "./http-ops.ts";
import { interleaved, median, sequential, throughput } from "./stats.ts";

export interface SmallFileGoals {
  readP50: Goal;
  writeP50: Goal | null;
  readInFlight: Goal;
  /** Against the durable-write floor, where the endpoints have one. */
  durableWriteP50?: Goal;
  /** Also time reads through `fetch` (undici) on both sides: what `fetch` users see. */
  fetchRead?: boolean;
}

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
  const readVariants: Record<string, () => Promise<number>> = { cap: p50(ends.cap, get), floor: p50(ends.floor, get) };
  if (goals.fetchRead) {
    readVariants.capFetch = p50(ends.cap, fetchGet);
    readVariants.floorFetch = p50(ends.floor, fetchGet);
  }
  const read = await interleaved(rounds, readVariants);
  const writeVariants: Record<string, () => Promise<number>> = {
    cap: p50(ends.cap, (u) => put(u)),
    floor: p50(ends.floor, (u) => put(u)),
  };
  const durable = ends.durableFloor;
  if (durable) writeVariants.durable = p50(durable, (u) => put(u));
  const committed = ends.committedFloor;
  if (committed) writeVariants.committed = p50(committed, (u) => put(u));
  const write = await interleaved(rounds, writeVariants);
  const rate = (url: (n: string) => string) => () => throughput(inFlightCalls, IN_FLIGHT, (i) => get(url(name(i))));
  const many = await interleaved(rounds, { cap: rate(ends.cap), floor: rate(ends.floor) });
  const common = { section, floorName };
  const extra: Row[] = [];
  if (goals.fetchRead)
    extra.push(
      makeRow({
        ...common,
        row: `${label} read 1 KiB p50, fetch client`,
        unit: "ms",
        cap: read.capFetch!,
        floor: read.floorFetch!,
        floorName: `${floorName}, fetch`,
      }),
    );
  if (durable)
    extra.push(
      makeRow({
        ...common,
        row: `${label} write 1 KiB p50 vs durable write`,
        unit: "ms",
        cap: write.cap!,
        floor: write.durable!,
        floorName: `${floorName}, temp+fsync+rename`,
        goal: goals.durableWriteP50 ?? null,
      }),
    );
  if (committed)
    extra.push(
      makeRow({
        ...common,
        row: `${label} write 1 KiB p50 vs the same commits`,
        unit: "ms",
        cap: write.cap!,
        floor: write.committed!,
        floorName: `${floorName}${durable ? ", durable" : ""}, + journal and audit commits`,
        goal: null,
      }),
    );
  return [
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
      cap: many.cap,
      floor: many.floor,
      goal: goals.readInFlight,
    }),
    ...extra,
  ];
}
