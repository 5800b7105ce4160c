import type { BenchContext } from "./bench-context.ts";
import type { Row } from "./bench-row.ts";
import { clients } from "./clients.ts";
import { depth } from "./depth.ts";
import { disk } from "./disk.ts";
import { entry } from "./entry.ts";
import { holder } from "./holder.ts";
import { large } from "./large.ts";
import { manyCaps } from "./many-caps.ts";
import { mcp } from "./mcp.ts";
import { r2 } from "./r2.ts";
import { revocation } from "./revocation.ts";
import { rpc } from "./rpc.ts";
import { watch } from "./watch.ts";

export type Section = (ctx: BenchContext) => Promise<Row[]>;

/**
 * Every section, in the order they run (`--only` picks by name). Adding one
 * is one line: a module `bench/<section>.ts` whose function returns rows.
 * The restarts of `caps` come last but one so the other sections share a warm vault.
 */
export const SECTIONS: Record<string, Section> = {
  entry,
  r2,
  disk,
  mcp,
  large,
  depth,
  holder,
  clients,
  rpc,
  watch,
  caps: manyCaps,
  revocation,
};
