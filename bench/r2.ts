import type { BenchContext } from "./bench-context.ts";
import type { Row } from "./bench-row.ts";
import { r2Endpoints } from "./http-ops.ts";
import { smallFileRows } from "./small-files.ts";

/** R2 through the vault vs the direct-binding floor worker on the same bucket. */
export function r2(ctx: BenchContext): Promise<Row[]> {
  return smallFileRows(ctx, "r2", "R2", "R2 floor worker", r2Endpoints(ctx.vault.rootCapUrl, ctx.r2Floor.url), {
    readP50: { on: "ratio", op: "<=", value: 1.3 },
    writeP50: { on: "ratio", op: "<=", value: 1.6 },
    readInFlight: { on: "ratio", op: ">=", value: 0.8 },
    fetchRead: true,
  });
}
