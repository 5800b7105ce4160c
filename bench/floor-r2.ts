import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { PROJECT_ROOT } from "../launcher/build-worker.ts";
import { readRuntimeConfig } from "../launcher/runtime-config.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface R2Floor {
  /** Origin of the floor worker; `?key=` names an R2 key. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the R2 floor worker (bench/floor-worker.ts) in a second Miniflare,
 * on the vault's own R2 persist folder: the same workerd build and the same
 * bucket files, so the only difference from the vault is the vault's own
 * work. A second instance rather than a second worker in the vault's: the
 * launcher runs exactly one script and seals its loopback, and the bench must
 * measure the launcher as users run it. With `diskSocket` the worker also
 * reaches a disk floor over that unix socket (`?disk=` routes).
 */
export async function startR2Floor(
  r2Persist: string,
  outDir: string,
  options: { diskSocket?: string } = {},
): Promise<R2Floor> {
  const scriptPath = path.join(outDir, "floor-worker.js");
  await build({
    entryPoints: [path.join(HERE, "floor-worker.ts")],
    outfile: scriptPath,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2024",
    external: ["cloudflare:workers"],
    logLevel: "error",
  });
  const mf = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    modules: true,
    scriptPath,
    modulesRoot: outDir,
    // The vault's runtime date, so the floor runs on the runtime the vault does.
    compatibilityDate: readRuntimeConfig(path.join(PROJECT_ROOT, "wrangler.toml")).compatibilityDate,
    r2Buckets: ["BUCKET"],
    r2Persist,
    // The objects of `?commits=1` keep SQLite files on disk, as the vault's do (their fsyncs are the point).
    durableObjects: { OBJECTS: { className: "FloorObject", useSQLite: true } },
    durableObjectsPersist: path.join(outDir, "floor-objects"),
    // The socket disk floor, bound as the launcher binds the disk host (launcher/start-vault.ts).
    ...(options.diskSocket
      ? { serviceBindings: { DISK: { external: { address: `unix:${options.diskSocket}`, http: {} } } } }
      : {}),
  });
  const url = (await mf.ready).origin;
  return { url, stop: () => mf.dispose() };
}
