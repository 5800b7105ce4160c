import { randomBytes } from "node:crypto";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { patchPoolWorkers } from "./test/pool-workers-patch.ts";
import { keepConsoleLog } from "./test/request-log-filter.ts";

/**
 * A real Think agent over a cap (test/workers-think/): the vault's worker
 * with a Think agent class beside it (test/workers-think/pool-main.ts), in its
 * own workerd so the `workers` project's files never load the Agents SDK.
 * R2 only: the disk backend is the same adapter below the cap, and the
 * `workers` project runs CapWorkspace over both.
 */
patchPoolWorkers();
// As vitest.workers.config.ts: wrangler.toml's required secrets, the tests' own.
process.env.CAPVAULT_ADMIN_TOKEN ??= "test-admin-token";
const TOKEN_KEY = randomBytes(32).toString("base64url");
process.env.CAPVAULT_TOKEN_KEY ??= TOKEN_KEY;

export default defineConfig({
  plugins: [
    cloudflareTest({
      main: "./test/workers-think/pool-main.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          CAPVAULT_ADMIN_TOKEN: "test-admin-token",
          CAPVAULT_TOKEN_KEY: TOKEN_KEY,
          CAPVAULT_PUBLIC_URL: "https://vault.test",
        },
        durableObjects: { THINK: { className: "ScriptedThinkAgent", useSQLite: true } },
      },
    }),
  ],
  test: {
    name: "workers-think",
    // Effective only when this file is the root config; see test/request-log-filter.ts.
    onConsoleLog: keepConsoleLog,
    include: ["test/workers-think/**/*.think.test.ts"],
    setupFiles: ["./test/workers/warm-up.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    isolate: false,
  },
});
