/**
 * `npx tsx bench/entry-probe.ts`: a request's cost on the local runtime, layer
 * by layer, p50 of 300 sequential calls each (after a warm-up, interleaved in
 * five rounds): the worker answering a constant (`GET /`), a forged token
 * (worker and MAC check, no object), a cap's info (worker and the cap's
 * Durable Object), then 1 KiB reads and a stat through an R2 cap and a disk
 * cap. The first row is what any request served by workerd costs here, which
 * the plain Node file server of the disk floor does not pay. Then each, 16 in
 * flight for 3 s: requests per second.
 */
import { startTestVault } from "../test/node/test-vault.ts";
import { get, put } from "./http-ops.ts";
import { median, timed } from "./stats.ts";

const vault = await startTestVault();
try {
  await put(`${vault.rootCapUrl}/file?path=probe.txt`);
  await put(`${vault.diskCapUrl}/file?path=probe.txt`);
  const forged = `${vault.url}/object/${"a".repeat(48)}/stat?path=x`;
  const layers: Record<string, () => Promise<unknown>> = {
    "GET / (the worker alone)": () => get(`${vault.url}/`),
    "forged token (worker, MAC check)": () => fetch(forged).then((r) => r.arrayBuffer()),
    "cap info (worker + the cap's object)": () => get(vault.rootCapUrl),
    "R2 read 1 KiB through a cap": () => get(`${vault.rootCapUrl}/file?path=probe.txt`),
    "disk read 1 KiB through a cap": () => get(`${vault.diskCapUrl}/file?path=probe.txt`),
    "disk stat through a cap": () => get(`${vault.diskCapUrl}/stat?path=probe.txt`),
  };
  for (let i = 0; i < 50; i++) for (const call of Object.values(layers)) await call();
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(layers).map((name) => [name, []]));
  for (let round = 0; round < 5; round++)
    for (const [name, call] of Object.entries(layers))
      for (let i = 0; i < 60; i++) samples[name]!.push(await timed(call));
  for (const [name, values] of Object.entries(samples))
    console.log(`${name.padEnd(40)} p50 ${median(values).toFixed(2)} ms`);
  // The same layers 16 at a time: the most requests per second the runtime serves here at all (GET /).
  for (const [name, call] of Object.entries(layers)) {
    const until = performance.now() + 3000;
    let done = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (performance.now() < until) {
          await call();
          done++;
        }
      }),
    );
    console.log(`${name.padEnd(40)} 16 in flight ${(done / 3).toFixed(0)}/s`);
  }
} finally {
  await vault.stop();
}
