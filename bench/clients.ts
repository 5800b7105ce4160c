import type { BenchContext } from "./bench-context.ts";
import { makeRow, type Row } from "./bench-row.ts";
import { get, head, mintChild, put } from "./http-ops.ts";
import { interleaved, timed } from "./stats.ts";

/** The calls one client makes, on its own subtree. */
interface Mix {
  read: (client: number) => string;
  write: (client: number) => string;
  stat: (client: number) => string;
  list: (client: number) => string;
  /** How `stat` is asked: the vault answers GET /stat, the floors HEAD. */
  statOp: (url: string) => Promise<void>;
}

/** Out of 10 calls: 5 reads, 2 writes, 2 stats, 1 list. */
const PATTERN = ["read", "write", "read", "stat", "read", "list", "read", "stat", "write", "read"] as const;

/** Calls per second of `clients` clients at once, each making `calls` calls one after another. */
async function rate(clients: number, calls: number, op: (client: number, j: number) => Promise<void>): Promise<number> {
  const ms = await timed(() =>
    Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let j = 0; j < calls; j++) await op(c, j);
      }),
    ),
  );
  return (clients * calls) / (ms / 1000);
}

function mixed(mix: Mix) {
  return (c: number, j: number) => {
    const kind = PATTERN[j % PATTERN.length]!;
    if (kind === "write") return put(mix.write(c));
    if (kind === "stat") return mix.statOp(mix.stat(c));
    return get(kind === "read" ? mix.read(c) : mix.list(c));
  };
}

/**
 * Many clients at once on R2: each with its own cap over its own folder,
 * mixing reads, writes, stats and lists, vs the same calls on the R2 floor
 * worker; and reads by all clients through one hot cap vs each through its own.
 */
export async function clients(ctx: BenchContext): Promise<Row[]> {
  const { clients: n, callsPerClient: calls, rounds } = ctx.size;
  const root = ctx.vault.rootCapUrl;
  const floor = ctx.r2Floor.url;
  const caps: string[] = [];
  for (let c = 0; c < n; c++) {
    caps.push(await mintChild(root, `clients/c${c}`));
    await put(`${caps[c]}/file?path=f`);
  }
  const capMix: Mix = {
    read: (c) => `${caps[c]}/file?path=f`,
    write: (c) => `${caps[c]}/file?path=w`,
    stat: (c) => `${caps[c]}/stat?path=f`,
    list: (c) => `${caps[c]}/list?path=`,
    statOp: get,
  };
  const key = (c: number, name: string) => `${floor}/?key=${encodeURIComponent(`default/clients/c${c}/${name}`)}`;
  const floorMix: Mix = {
    read: (c) => key(c, "f"),
    write: (c) => key(c, "w"),
    stat: (c) => key(c, "f"),
    list: (c) => `${floor}/?list=${encodeURIComponent(`default/clients/c${c}/`)}`,
    statOp: head,
  };
  const mix = await interleaved(rounds, {
    cap: () => rate(n, calls, mixed(capMix)),
    floor: () => rate(n, calls, mixed(floorMix)),
  });
  const hot = await interleaved(rounds, {
    one: () => rate(n, calls, () => get(capMix.read(0))),
    own: () => rate(n, calls, (c) => get(capMix.read(c))),
  });
  return [
    makeRow({
      section: "clients",
      row: `${n} clients, mixed calls (R2)`,
      unit: "req/s",
      cap: mix.cap,
      floor: mix.floor,
      floorName: "R2 floor worker",
    }),
    makeRow({
      section: "clients",
      row: `${n} clients reading: one hot cap vs a cap each`,
      unit: "req/s",
      cap: hot.one,
      floor: hot.own,
      floorName: `${n} caps, one per client`,
    }),
  ];
}
