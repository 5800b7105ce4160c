import type { BenchContext } from "./bench-context.ts";
import type { Row } from "./bench-row.ts";
import { diskEndpoints } from "./http-ops.ts";
import { smallFileRows } from "./small-files.ts";

/**
 * The disk backend through the vault vs a plain node fs HTTP server over
 * the same folder, and its durable writes; and vs the floor worker's `?disk=`
 * routes, which pay the vault's three processes (worker, object, a Node
 * process over a unix socket) on the same folder (bench/floor-worker.ts).
 */
export function disk(ctx: BenchContext): Promise<Row[]> {
  const plain = (query: string) => (name: string) =>
    `${ctx.diskFloor.url}/file?path=${encodeURIComponent(name)}${query}`;
  const hop = (query: string) => (name: string) => `${ctx.r2Floor.url}/?disk=${encodeURIComponent(name)}${query}`;
  const threeHops = "worker, object hop (RPC), node fs server over a unix socket";
  return smallFileRows(ctx, "disk", "disk", "node fs server", diskEndpoints(ctx.vault.diskCapUrl, ctx.diskFloor.url), {
    readP50: { on: "ratio", op: "<=", value: 3 },
    // The plain floor neither fsyncs nor renames: the vault's write is judged against the durable one.
    writeP50: null,
    readInFlight: { on: "ratio", op: ">=", value: 0.3 },
    writeFloors: [
      {
        vs: "vs durable write",
        floorName: "node fs server, temp+fsync+rename",
        url: plain("&durable=1"),
        goal: { on: "ratio", op: "<=", value: 1.5 },
      },
      {
        vs: "vs the same commits",
        floorName: "node fs server, durable, + journal and audit commits",
        url: plain("&durable=1&commits=1"),
      },
      {
        vs: "vs worker, object hop, socket, durable write and commits",
        floorName: `${threeHops}, durable, journal and audit commits`,
        url: hop("&commits=1"),
      },
    ],
    readFloors: [{ vs: "vs worker, object hop and socket", floorName: threeHops, url: hop("&hop=1") }],
  });
}
