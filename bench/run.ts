/**
 * `npm run bench [-- --size tiny|full] [--only r2,disk,...] [--out FILE] [--profile DIR]`:
 * starts its own vault on fresh temp state and measures each row against its
 * floor or peer in the same run, interleaved, medians of rounds. Prints one
 * table and writes the figures to bench/results.json (or FILE). A benchmark,
 * not a test: it asserts nothing about speed. `--profile DIR` has the
 * launcher's Node process (the disk host) write a CPU profile into DIR.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
// Node's fetch keeps idle connections longer than workerd does; the tests' fix for that race, reused.
import "../test/node/fetch-setup.ts";
import { SIZES } from "./bench-context.ts";
import { runBench } from "./run-bench.ts";
import { SECTIONS } from "./sections.ts";
import { formatTable } from "./table.ts";

const { values } = parseArgs({
  options: {
    size: { type: "string", default: "full" },
    only: { type: "string" },
    out: { type: "string" },
    profile: { type: "string" },
  },
});
const size = SIZES[values.size as keyof typeof SIZES];
if (!size) throw new Error(`--size must be tiny or full, not ${values.size}`);
const sections = values.only ? values.only.split(",").map((s) => s.trim()) : Object.keys(SECTIONS);
const out = values.out ?? path.join(path.dirname(fileURLToPath(import.meta.url)), "results.json");

const started = performance.now();
const log = (line: string) => process.stderr.write(`${line}\n`);
const results = await runBench(size, sections, log, values.profile ? { profileDir: path.resolve(values.profile) } : {});
console.log(`capvault bench, ${size.name} size, commit ${results.commit}, Node ${results.node}, ${results.date}\n`);
console.log(formatTable(results.rows));
await writeFile(out, `${JSON.stringify(results, null, 2)}\n`);
console.log(
  `\n${results.rows.length} rows in ${((performance.now() - started) / 1000).toFixed(0)} s; figures in ${out}`,
);
