import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, stop } from "esbuild";

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Bundles the worker for Miniflare, the way wrangler would: one ES module,
 * runtime modules (`cloudflare:*`, `node:*`) left to workerd.
 */
export async function buildWorker(outDir: string): Promise<string> {
  const outfile = path.join(outDir, "worker.js");
  await build({
    entryPoints: [path.join(PROJECT_ROOT, "worker/index.ts")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2024",
    conditions: ["workerd", "worker", "browser", "import"],
    mainFields: ["module", "main"],
    external: ["cloudflare:*", "node:*"],
    logLevel: "error",
  });
  // esbuild keeps a service process for later builds; the launcher makes none.
  await stop();
  return outfile;
}
