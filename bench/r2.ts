import type { BenchContext } from "./bench-context.ts";
import type { Row } from "./bench-row.ts";
import { r2Endpoints } from "./http-ops.ts";
import { smallFileRows } from "./small-files.ts";

/**
 * R2 through the vault vs the direct-binding floor worker on the same
 * bucket, and vs the floor worker's routes that pay the vault's object hop,
 * checks and commits (bench/floor-worker.ts says what each pays): every
 * write makes four kinds of R2 call before its put (r2-storage.ts), and
 * keeps its version as a blob put beside the file's (version-blobs.ts says
 * why a version is never kept in the journal's row), shown without and with it.
 */
export function r2(ctx: BenchContext): Promise<Row[]> {
  const floor = (query: string) => (name: string) =>
    `${ctx.r2Floor.url}/?key=${encodeURIComponent(`default/${name}`)}${query}`;
  const commits = "journal and audit commits";
  return smallFileRows(ctx, "r2", "R2", "R2 floor worker", r2Endpoints(ctx.vault.rootCapUrl, ctx.r2Floor.url), {
    readP50: { on: "ratio", op: "<=", value: 1.3 },
    writeP50: { on: "ratio", op: "<=", value: 1.6 },
    readInFlight: { on: "ratio", op: ">=", value: 0.8 },
    fetchRead: true,
    writeFloors: [
      { vs: "vs the same commits", floorName: `R2 floor worker, + ${commits}`, url: floor("&commits=1") },
      {
        vs: "vs the same checks and commits",
        floorName: `R2 floor worker, object hop (RPC), 4 checks, hashed put, ${commits}`,
        url: floor("&commits=1&checks=1"),
      },
      {
        vs: "vs the same checks, version put and commits",
        floorName: `R2 floor worker, object hop (RPC), 4 checks, hashed put + version put, ${commits}`,
        url: floor("&commits=1&checks=1&version=1"),
      },
    ],
    readFloors: [
      {
        vs: "vs one object hop",
        floorName: "R2 floor worker, object hop (RPC, state row) then get",
        url: floor("&hop=1"),
      },
    ],
  });
}
