import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { Miniflare, type WorkerOptions } from "miniflare";
import { buildWorker, PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { readRuntimeConfig } from "../../launcher/runtime-config.ts";
import { vaultWorker } from "../../launcher/start-vault.ts";

/** A binding call's outcome as the consumer answers it: the value, or the refusal's text as it crossed. */
export type Settled<T = unknown> = { ok: true; value: T } | { ok: false; message: string };

export interface BindingPair {
  origin: string;
  /** The vault's HTTP surface (the consumer is the entry worker). */
  vaultFetch(route: string, init?: RequestInit): Promise<Response>;
  /** A root cap on R2 under `prefix`, minted by the admin. */
  mintRoot(prefix: string): Promise<{ token: string }>;
  /** A consumer route, POSTed `body` as JSON. */
  consume(route: string, body: unknown): Promise<Response>;
  /** Redeploys the consumer with a CapBinding whose props hold `token`: the props are fixed at deploy. */
  bindNotes(token: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The vault's real bundle (the launcher's build) beside a consumer Worker
 * (test/fixtures/binding-consumer/worker.js) in one Miniflare, bound as
 * another team's Worker binds it: `VAULT` to the CapVault entrypoint, `NOTES`
 * to CapBinding with one cap in its props (docs/workers.md). Used by
 * test/node/service-binding.node.test.ts and the binding rows of the hostile table.
 */
export async function startBindingPair(): Promise<BindingPair> {
  const origin = "https://vault.test";
  const admin = randomBytes(24).toString("base64url");
  const work = await mkdtemp(path.join(os.tmpdir(), "capvault-binding-"));
  const scriptPath = await buildWorker(path.join(work, "build"));
  const runtime = readRuntimeConfig(path.join(PROJECT_ROOT, "wrangler.toml"));
  const vault: WorkerOptions = {
    name: "capvault",
    ...vaultWorker(scriptPath, runtime),
    bindings: {
      CAPVAULT_ADMIN_TOKEN: admin,
      CAPVAULT_TOKEN_KEY: randomBytes(32).toString("base64url"),
      CAPVAULT_PUBLIC_URL: origin,
    },
  };
  const consumer = (notes: string | null): WorkerOptions => ({
    name: "consumer",
    modules: true,
    scriptPath: path.join(PROJECT_ROOT, "test/fixtures/binding-consumer/worker.js"),
    compatibilityDate: runtime.compatibilityDate,
    serviceBindings: {
      VAULT: { name: "capvault", entrypoint: "CapVault" },
      ...(notes ? { NOTES: { name: "capvault", entrypoint: "CapBinding", props: { token: notes } } } : {}),
    },
  });
  // On disk, so a redeploy of the consumer (setOptions) keeps the vault's state.
  const persist = { durableObjectsPersist: path.join(work, "do"), r2Persist: path.join(work, "r2") };
  // The vault's request log (a line a call) is left out; what workerd says on stderr is kept.
  const stdio = {
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      stdout.resume();
      stderr.pipe(process.stderr);
    },
  };
  const mf = new Miniflare({ ...persist, ...stdio, workers: [consumer(null), vault] });
  await mf.ready;

  const vaultFetch = async (route: string, init: RequestInit = {}) => {
    const worker = await mf.getWorker("capvault");
    return (await worker.fetch(`${origin}${route}`, init as never)) as unknown as Response;
  };
  return {
    origin,
    vaultFetch,
    async mintRoot(prefix) {
      const res = await vaultFetch("/admin/roots", {
        method: "POST",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: JSON.stringify({ backend: "r2", prefix }),
      });
      if (res.status !== 201) throw new Error(`minting a root failed: ${res.status} ${await res.text()}`);
      return (await res.json()) as { token: string };
    },
    consume: (route, body) =>
      mf.dispatchFetch(`http://consumer${route}`, {
        method: "POST",
        body: JSON.stringify(body),
      }) as unknown as Promise<Response>,
    async bindNotes(token) {
      await mf.setOptions({ ...persist, ...stdio, workers: [consumer(token), vault] });
    },
    async stop() {
      await mf.dispose();
      await rm(work, { recursive: true, force: true });
    },
  };
}
