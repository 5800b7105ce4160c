import type { BenchContext } from "./bench-context.ts";
import type { Row } from "./bench-row.ts";
import { diskEndpoints } from "./http-ops.ts";
import { smallFileRows } from "./small-files.ts";

/** The disk backend through the vault vs a plain node fs HTTP server over the same folder. */
export function disk(ctx: BenchContext): Promise<Row[]> {
  return smallFileRows(ctx, "disk", "disk", "node fs server", diskEndpoints(ctx.vault.diskCapUrl, ctx.diskFloor.url), {
    readP50: { on: "ratio", op: "<=", value: 2, stretch: 1.3 },
    writeP50: { on: "ratio", op: "<=", value: 2, stretch: 1.3 },
    readInFlight: { on: "ratio", op: ">=", value: 0.6 },
  });
}
