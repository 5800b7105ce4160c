/**
 * `npx tsx bench/mint-floor.ts [mints] [inFlight]`: the least a mint can cost on this runtime
 * while every cap is a Durable Object of its own. A bare worker on the same Miniflare and
 * workerd, persisting to a temp folder on the same file system as the vault's bench state,
 * answers each POST by making one new object and committing one record in it (one `put`),
 * nothing else: no token, no parent index, no audit, no R2 check. The vault's mint cannot go
 * below this without fewer objects per cap, so it bounds what any change to the mint path buys.
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Miniflare } from "miniflare";
import { childPids, processCpuMs } from "./proc-stats.ts";

const mints = Number(process.argv[2] ?? 200);
const inFlight = Number(process.argv[3] ?? 1);

const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
export class Floor extends DurableObject {
  async init(record) {
    await this.ctx.storage.put("cap", record);
    return true;
  }
}
export default {
  async fetch(request, env) {
    const stub = env.FLOOR.get(env.FLOOR.idFromName(crypto.randomUUID()));
    await stub.init({ rights: ["read"], root: "x/", createdAt: Date.now() });
    return new Response("{}", { status: 201 });
  },
};`;

/** User + system CPU (ms) of this process's workerd children. */
const workerdCpuMs = async () => processCpuMs(await childPids(process.pid, "workerd"));

const state = await mkdtemp(path.join(os.tmpdir(), "capvault-mint-floor-"));
const mf = new Miniflare({
  host: "127.0.0.1",
  port: 0,
  modules: true,
  script: SCRIPT,
  compatibilityDate: "2026-04-26",
  durableObjects: { FLOOR: { className: "Floor", useSQLite: true } },
  durableObjectsPersist: path.join(state, "durable-objects"),
});
try {
  const url = (await mf.ready).href;
  const mint = async () => {
    const res = await fetch(url, { method: "POST" });
    if (res.status !== 201) throw new Error(`floor answered ${res.status}`);
    await res.arrayBuffer();
  };
  for (let i = 0; i < 5; i++) await mint();
  const c0 = await workerdCpuMs();
  const t0 = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < mints) {
      next++;
      await mint();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const wall = performance.now() - t0;
  const cpu = (await workerdCpuMs()) - c0;
  console.log(
    `floor: ${mints} new objects, ${inFlight} in flight: ${(wall / mints).toFixed(2)} ms wall per object, ${(cpu / mints).toFixed(2)} ms workerd CPU per object (total ${wall.toFixed(0)} ms)`,
  );
} finally {
  await mf.dispose();
  await rm(state, { recursive: true, force: true });
}
