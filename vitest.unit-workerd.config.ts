import { readFileSync } from "node:fs";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/**
 * The unit tests of code that runs inside workerd in production (the path
 * parser and wire helpers in shared/, the SDK in clients/typescript/) run here too, not
 * only in Node: TextDecoder, streams, timers, crypto and the clock differ
 * between the runtimes (workerd's clock stands still between I/O), and the
 * code must hold in the one it is deployed to. The `node` project still runs
 * the same files.
 */
const wrangler = readFileSync(new URL("./wrangler.toml", import.meta.url), "utf8");
// The worker's own compatibility settings, so these tests see the runtime the worker sees.
const compatibilityDate = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(wrangler)?.[1];
const compatibilityFlags = JSON.parse(/^compatibility_flags\s*=\s*(\[[^\]]*\])/m.exec(wrangler)?.[1] ?? "[]");
if (!compatibilityDate) throw new Error("wrangler.toml has no compatibility_date");

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
    // Isolated like `workers` (see vitest.workers.config.ts): non-isolated runs of this
    // pool version slow with every file and can stall.
  },
});
