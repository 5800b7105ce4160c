import type { BenchContext } from "./bench-context.ts";
import { type Goal, makeRow, type Row } from "./bench-row.ts";
import { diskEndpoints, type FileEndpoints, r2Endpoints } from "./http-ops.ts";
import { heapGrowthDuring, type IsolateHeaps, isolateHeaps } from "./isolate-heaps.ts";
import { download, upload } from "./large-transfer.ts";
import { childPids, groupPids, rssGrowthDuring } from "./proc-stats.ts";
import { median, timed } from "./stats.ts";

const MIB = 1024 * 1024;

interface Side {
  url: string;
  pids: () => Promise<number[]>;
}

/**
 * MiB/s up and down, and the peak RSS growth of `side`'s processes over both;
 * with `heaps`, also how far each of the vault's isolates rose meanwhile.
 */
async function transfer(side: Side, bytes: number, heaps?: IsolateHeaps) {
  let up = 0;
  let down = 0;
  let isolates: Record<string, number> = {};
  const work = async () => {
    up = await timed(() => upload(side.url, bytes));
    down = await timed(() => download(side.url, bytes));
  };
  const growth = await rssGrowthDuring(side.pids, async () => {
    if (heaps) isolates = await heapGrowthDuring(heaps, work);
    else await work();
  });
  const mib = bytes / MIB;
  return { up: mib / (up / 1000), down: mib / (down / 1000), growth, isolates };
}

async function backendRows(
  ctx: BenchContext,
  label: string,
  ends: FileEndpoints,
  floorPids: () => Promise<number[]>,
  floorName: string,
  goals: { up?: Goal; down?: Goal },
  /** A second floor that pays what the vault's upload does (its name), in the same rounds. */
  paying: { url: string; name: string } | undefined,
  /** The vault's isolates whose growth gets a row (see bench/isolate-heaps.ts). */
  isolates: string[],
  heaps: IsolateHeaps,
): Promise<Row[]> {
  const bytes = ctx.size.largeBytes;
  const sides: Record<Kind, Side | null> = {
    cap: { url: ends.cap("bench/large.bin"), pids: () => groupPids(ctx.vault.pgid) },
    floor: { url: ends.floor("bench/large.bin"), pids: floorPids },
    paying: paying ? { url: paying.url, pids: floorPids } : null,
  };
  const figures: Record<Kind, Awaited<ReturnType<typeof transfer>>[]> = { cap: [], floor: [], paying: [] };
  for (let r = 0; r < ctx.size.largeRounds; r++) {
    const order: Kind[] = r % 2 === 0 ? ["cap", "floor", "paying"] : ["paying", "floor", "cap"];
    for (const k of order) {
      const side = sides[k];
      if (side) figures[k].push(await transfer(side, bytes, k === "cap" ? heaps : undefined));
    }
  }
  const med = (k: Kind, f: "up" | "down" | "growth") => median(figures[k].map((x) => x[f]));
  const peak = (k: Kind) => Math.max(...figures[k].map((x) => x.growth));
  const isolatePeak = (name: string) => Math.max(...figures.cap.map((x) => x.isolates[name] ?? 0));
  const size = `${Math.round(bytes / MIB)} MiB`;
  const common = { section: "large", floorName };
  const payingRows: Row[] = paying
    ? [
        makeRow({
          ...common,
          row: `${label} ${size} up vs ${paying.name}`,
          unit: "MiB/s",
          cap: med("cap", "up"),
          floor: med("paying", "up"),
          floorName: paying.name,
        }),
        makeRow({
          ...common,
          row: `${label} ${size} up+down, RSS growth vs ${paying.name}`,
          unit: "MiB",
          cap: peak("cap"),
          floor: peak("paying"),
          floorName: paying.name,
        }),
      ]
    : [];
  return [
    makeRow({
      ...common,
      row: `${label} ${size} up`,
      unit: "MiB/s",
      cap: med("cap", "up"),
      floor: med("floor", "up"),
      goal: goals.up ?? null,
    }),
    makeRow({
      ...common,
      row: `${label} ${size} down`,
      unit: "MiB/s",
      cap: med("cap", "down"),
      floor: med("floor", "down"),
      goal: goals.down ?? null,
    }),
    makeRow({
      ...common,
      row: `${label} ${size} up+down, RSS growth of all vault processes (max of rounds)`,
      unit: "MiB",
      cap: peak("cap"),
      floor: peak("floor"),
      goal: { on: "cap", op: "<=", value: 64 },
    }),
    ...payingRows,
    // Where the vault's RSS growth is: its own isolate (JavaScript heap and the ArrayBuffers it holds, the
    // upload's chunks among them), and on R2 the simulator's isolate in the same workerd process.
    ...isolates.map((name) =>
      makeRow({
        section: "large",
        row: `${label} ${size} up+down, growth of the ${name} isolate in the vault's workerd (JS heap + ArrayBuffers, max of rounds)`,
        unit: "MiB",
        cap: isolatePeak(name),
        floor: null,
        floorName: null,
      }),
    ),
  ];
}

type Kind = "cap" | "floor" | "paying";

/**
 * A large file up and down through each backend and through its floor, and
 * how much the resident memory of every process of the vault (launcher and
 * workerd) grows meanwhile: a vault that streams holds a few chunks, not the file.
 */
export async function large(ctx: BenchContext): Promise<Row[]> {
  const heaps = await isolateHeaps(ctx.inspector);
  try {
    return await largeRows(ctx, heaps);
  } finally {
    heaps.close();
  }
}

async function largeRows(ctx: BenchContext, heaps: IsolateHeaps): Promise<Row[]> {
  const r2Ends = r2Endpoints(ctx.vault.rootCapUrl, ctx.r2Floor.url);
  const r2 = await backendRows(
    ctx,
    "R2",
    r2Ends,
    () => childPids(process.pid, "workerd"),
    "R2 floor worker",
    // Issue 25: upload at least as fast as the floor worker's own put of the same file, in the same run.
    { up: { on: "ratio", op: ">=", value: 1 } },
    // The vault keeps a version of every write: its bytes go to the version blob, then from there to the key.
    { url: `${r2Ends.floor("bench/large.bin")}&staged=1`, name: "floor staging a version as the vault does" },
    ["vault", "R2 simulator"],
    heaps,
  );
  const diskFloorPid = ctx.diskFloor.pid;
  const disk = await backendRows(
    ctx,
    "disk",
    diskEndpoints(ctx.vault.diskCapUrl, ctx.diskFloor.url),
    async () => [diskFloorPid],
    "node fs server",
    {},
    undefined,
    ["vault"],
    heaps,
  );
  return [...r2, ...disk];
}
