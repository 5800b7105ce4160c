/**
 * The floor of minting and revoking a tree of caps while every cap is a
 * Durable Object of its own: a bare worker on the same Miniflare and workerd,
 * persisting to a temp folder on the same file system as the vault's bench
 * state. A mint makes one new object that commits its record (one `put`) and
 * has its parent commit the child's name, both at once; a kill deletes an
 * object's keys in one commit (as a revoked leaf cap dies: leaf-state.ts)
 * and then kills its children, all at once, answering when
 * the whole subtree is gone. No token, no rights, no audit line, no R2 check of
 * the child's root, no expiry: what the vault's mint and revocation (a record
 * per cap, the parent's index, a cascade down it) cannot go below on this
 * runtime without fewer objects per cap.
 *
 * @example
 * const floor = await startObjectTreeFloor();
 * const child = await floor.mint(await floor.mint(null));
 * await floor.kill(child);
 * await floor.stop();
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Miniflare } from "miniflare";
import { PROJECT_ROOT } from "../launcher/build-worker.ts";
import { readRuntimeConfig } from "../launcher/runtime-config.ts";
import { childPids, processCpuMs } from "./proc-stats.ts";

const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
const stub = (env, name) => env.FLOOR.get(env.FLOOR.idFromName(name));
export class Floor extends DurableObject {
  async init(record) {
    await this.ctx.storage.put("cap", record);
    return true;
  }
  async adopt(child) {
    const children = (await this.ctx.storage.get("children")) ?? [];
    children.push(child);
    await this.ctx.storage.put("children", children);
    return true;
  }
  async kill() {
    const children = (await this.ctx.storage.get("children")) ?? [];
    await this.ctx.storage.delete(["cap", "children"]);
    await Promise.all(children.map((child) => stub(this.env, child).kill()));
    return true;
  }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/kill") {
      await stub(env, url.searchParams.get("name")).kill();
      return new Response(null, { status: 204 });
    }
    const name = crypto.randomUUID();
    const parent = url.searchParams.get("parent");
    await Promise.all([
      stub(env, name).init({ rights: ["read"], root: "x/", createdAt: Date.now() }),
      parent ? stub(env, parent).adopt(name) : true,
    ]);
    return new Response(name, { status: 201 });
  },
};`;

export interface ObjectTreeFloor {
  /** A new object, recorded in `parent` when one is named; its name. */
  mint(parent: string | null): Promise<string>;
  /** Deletes `name` and every object under it. */
  kill(name: string): Promise<void>;
  /** User + system CPU (ms) of this floor's workerd so far. */
  cpuMs(): Promise<number>;
  stop(): Promise<void>;
}

export async function startObjectTreeFloor(): Promise<ObjectTreeFloor> {
  const state = await mkdtemp(path.join(os.tmpdir(), "capvault-object-floor-"));
  const before = new Set(await childPids(process.pid, "workerd"));
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    modules: true,
    script: SCRIPT,
    // The vault's runtime date, so the floor runs on the runtime the vault does.
    compatibilityDate: readRuntimeConfig(path.join(PROJECT_ROOT, "wrangler.toml")).compatibilityDate,
    durableObjects: { FLOOR: { className: "Floor", useSQLite: true } },
    durableObjectsPersist: path.join(state, "durable-objects"),
  });
  const origin = (await mf.ready).origin;
  // This instance's workerd: the one child that was not there before it started.
  const pids = (await childPids(process.pid, "workerd")).filter((pid) => !before.has(pid));
  const call = async (url: string, expected: number) => {
    const res = await fetch(url, { method: "POST" });
    const text = await res.text();
    if (res.status !== expected) throw new Error(`the object floor answered ${res.status}`);
    return text;
  };
  return {
    mint: (parent) => call(`${origin}/mint${parent ? `?parent=${parent}` : ""}`, 201),
    kill: async (name) => void (await call(`${origin}/kill?name=${name}`, 204)),
    cpuMs: () => processCpuMs(pids),
    stop: async () => {
      await mf.dispose();
      await rm(state, { recursive: true, force: true });
    },
  };
}
