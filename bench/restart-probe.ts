/**
 * `npx tsx bench/restart-probe.ts [restarts]`: what the first request after a
 * restart pays, taken apart. After each restart of the real launcher (same
 * state): the first request of all, to `GET /` (the worker alone, no cap, no
 * Durable Object), then the first read through a cap not used since, then a
 * second read through that cap, and a warm read through a cap used before.
 * The bench's "first request after a restart" row is the first request of all
 * on a cap; this says how much of it is the runtime starting the worker.
 */
import { startTestVault } from "../test/node/test-vault.ts";
import { get, mintChild, put } from "./http-ops.ts";
import { median, timed } from "./stats.ts";

const restarts = Number(process.argv[2] ?? 5);
const vault = await startTestVault();
try {
  const root = vault.rootCapUrl;
  await put(`${root}/file?path=probe.txt`);
  const caps = [];
  for (let i = 0; i < restarts * 2; i++) caps.push(await mintChild(root));
  const read = (cap: string) => get(`${cap}/file?path=probe.txt`);
  for (let i = 0; i < 20; i++) await read(root);
  const rows: Record<string, number[]> = { "GET / first": [], "cap read, first": [], "cap read, second": [] };
  rows["warm read"] = [];
  rows["cap read first, when first of all"] = [];
  for (let r = 0; r < restarts; r++) {
    await vault.restart();
    // Alternate: half the restarts start with GET /, half with a cap read, so both firsts are measured.
    const cap = caps.pop()!;
    if (r % 2 === 0) {
      rows["GET / first"]!.push(await timed(() => get(`${vault.url}/`)));
      rows["cap read, first"]!.push(await timed(() => read(cap)));
    } else rows["cap read first, when first of all"]!.push(await timed(() => read(cap)));
    rows["cap read, second"]!.push(await timed(() => read(cap)));
    for (let i = 0; i < 5; i++) rows["warm read"]!.push(await timed(() => read(root)));
  }
  for (const [name, values] of Object.entries(rows))
    console.log(
      `${name.padEnd(36)} median ${median(values).toFixed(1).padStart(7)} ms  (${values.map((v) => v.toFixed(1)).join(", ")})`,
    );
} finally {
  await vault.stop();
}
