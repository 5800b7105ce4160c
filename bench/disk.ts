import type { BenchContext } from "./bench-context.ts";
import type { Row } from "./bench-row.ts";
import { diskEndpoints } from "./http-ops.ts";
import { smallFileRows } from "./small-files.ts";

/** The disk backend through the vault vs a plain node fs HTTP server over the same folder, and its durable writes. */
export function disk(ctx: BenchContext): Promise<Row[]> {
  return smallFileRows(ctx, "disk", "disk", "node fs server", diskEndpoints(ctx.vault.diskCapUrl, ctx.diskFloor.url), {
    readP50: { on: "ratio", op: "<=", value: 3 },
    // The plain floor neither fsyncs nor renames: the vault's write is judged against the durable one.
    writeP50: null,
    readInFlight: { on: "ratio", op: ">=", value: 0.3 },
    durableWriteP50: { on: "ratio", op: "<=", value: 1.5 },
  });
}
