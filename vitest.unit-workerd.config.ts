import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { readRuntimeConfig } from "./launcher/runtime-config.ts";
import { patchPoolWorkers } from "./test/pool-workers-patch.ts";

/**
 * The unit tests of code that runs inside workerd in production (the path
 * parser and wire helpers in shared/, the SDK in clients/typescript/) run here too, not
 * only in Node: TextDecoder, streams, timers, crypto and the clock differ
 * between the runtimes (workerd's clock stands still between I/O), and the
 * code must hold in the one it is deployed to. The `node` project still runs
 * the same files.
 */
// The worker's own compatibility settings, so these tests see the runtime the worker sees.
const { compatibilityDate, compatibilityFlags } = readRuntimeConfig(
  fileURLToPath(new URL("./wrangler.toml", import.meta.url)),
);
// See vitest.workers.config.ts: the pool's quadratic wrapping, fixed before it loads.
patchPoolWorkers();

export default defineConfig({
  plugins: [cloudflareTest({ miniflare: { compatibilityDate, compatibilityFlags } })],
  test: {
    name: "unit-workerd",
    include: ["shared/**/*.test.ts", "clients/typescript/**/*.test.ts"],
    // A unit test of shared/ or clients/typescript/ that needs a Node API is listed here, with the reason on its line.
    // node:path, node:crypto's randomBytes and node:util's inspect exist under nodejs_compat; the file system does not.
    exclude: [
      "node_modules/**",
      // Scans the repository's source files (node:fs): a check of the code base, not of code that runs in workerd.
      "shared/refusal-sites.test.ts",
    ],
    // Not isolated, like `workers` (see vitest.workers.config.ts).
    isolate: false,
  },
});
