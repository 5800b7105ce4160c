/**
 * `npm run reliability`: fuzz, faults and load against the real launcher,
 * then one table. Exits 1 when any count that must be zero is not.
 *
 *   RELIABILITY_SCALE=small|full   size (default full: 10,000 fuzz cases per backend and 2,000 for each further surface, 256 MiB kills, 64 clients for 60 s)
 *   RELIABILITY_SEED=<n>           replay a run (the seed is printed first)
 *   RELIABILITY_ONLY=fuzz,load,faults,hostile   run only these parts
 *   RELIABILITY_BACKEND=r2|disk    fuzz and load only this backend
 *   RELIABILITY_CASE=<i>           with ONLY=fuzz: replay one fuzz case
 *   RELIABILITY_SURFACE=<s>,...    fuzz only these surfaces: http (HTTP, MCP, memory), rpc-batch, rpc-socket, versions, watch, console, binding
 *   RELIABILITY_HOSTILE_CASE=<a>,<b>   with ONLY=hostile: only the rows whose name holds one of these
 */

import type { Backend } from "../shared/wire-types.ts";
import type { SurfaceName } from "./fuzz-surfaces.ts";
import { hostileTable, runHostile } from "./hostile-run.ts";
import { scaleFromEnv } from "./scale.ts";
import { type Part, runSuite } from "./suite.ts";
import { failed, type Row, tableText } from "./table.ts";

const scale = scaleFromEnv();
const seed = process.env.RELIABILITY_SEED
  ? Number(process.env.RELIABILITY_SEED)
  : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const only = process.env.RELIABILITY_ONLY ? (process.env.RELIABILITY_ONLY.split(",") as Part[]) : undefined;
const backends = process.env.RELIABILITY_BACKEND
  ? (process.env.RELIABILITY_BACKEND.split(",") as Backend[])
  : undefined;
const fuzzCase = process.env.RELIABILITY_CASE ? Number(process.env.RELIABILITY_CASE) : undefined;
const surfaces = process.env.RELIABILITY_SURFACE
  ? (process.env.RELIABILITY_SURFACE.split(",") as (SurfaceName | "http" | "binding")[])
  : undefined;

console.log(
  `reliability: scale ${scale.name}, seed ${seed} (replay: RELIABILITY_SEED=${seed} RELIABILITY_SCALE=${scale.name} npm run reliability)`,
);
const started = Date.now();
const { rows } = await runSuite({
  scale,
  seed,
  only,
  backends,
  fuzzCase,
  surfaces,
  log: (line) => console.log(`  ${line}`),
});
const allRows: Row[] = [...rows];

// Hostile requests: a measurement of one caller's cost to others, shown beside the table, not failed on
// (wall time on a shared machine). RELIABILITY_ONLY without "hostile" skips it.
const hostile = !only || only.includes("hostile" as Part) ? await runHostile((line) => console.log(`  ${line}`)) : [];

console.log();
console.log(tableText(allRows));
if (hostile.length > 0) console.log(`\n${hostileTable(hostile)}`);
for (const row of allRows) for (const note of row.notes ?? []) console.log(`  ${row.check}: ${note}`);
console.log(`\n${((Date.now() - started) / 1000).toFixed(0)} s, seed ${seed}`);
const findings = allRows.flatMap((r) => r.findings.all);
const failures = findings.filter((f) => f.kind !== "drop");
if (failures.length > 0) {
  console.log(`\n${failures.length} findings (first 40):`);
  for (const f of failures.slice(0, 40)) console.log(`- [${f.kind}] ${f.check}: ${f.detail}\n    replay: ${f.replay}`);
}
const drops = findings.filter((f) => f.kind === "drop");
if (drops.length > 0) {
  // Connections closed under a request, which was then sent again: a pooled connection the server had just
  // closed (workerd closes idle ones after 5 s).
  console.log(`\n${drops.length} dropped connections (first 10):`);
  for (const f of drops.slice(0, 10)) console.log(`- ${f.check}: ${f.detail}\n    replay: ${f.replay}`);
}
process.exit(failed(allRows) ? 1 : 0);
