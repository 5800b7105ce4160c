/**
 * `npx tsx bench/mint-floor.ts [mints] [inFlight]`: the least a mint can cost on this runtime
 * while every cap is a Durable Object of its own: `mints` new bare objects, each committing one
 * record (bench/object-tree-floor.ts, with no parent here), nothing else: no token, no parent
 * index, no audit, no R2 check. The vault's mint cannot go below this without fewer objects per
 * cap, so it bounds what any change to the mint path buys. The revocation section runs the same
 * floor as a tree beside the vault's.
 */
import { startObjectTreeFloor } from "./object-tree-floor.ts";

const mints = Number(process.argv[2] ?? 200);
const inFlight = Number(process.argv[3] ?? 1);

const floor = await startObjectTreeFloor();
try {
  for (let i = 0; i < 5; i++) await floor.mint(null);
  const c0 = await floor.cpuMs();
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < mints) {
      next++;
      await floor.mint(null);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const wall = performance.now() - t0;
  const cpu = (await floor.cpuMs()) - c0;
  console.log(
    `floor: ${mints} new objects, ${inFlight} in flight: ${(wall / mints).toFixed(2)} ms wall per object, ${(cpu / mints).toFixed(2)} ms workerd CPU per object (total ${wall.toFixed(0)} ms)`,
  );
} finally {
  await floor.stop();
}
