import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { buildWorker } from "./launcher/build-worker.ts";
import { readRuntimeConfig } from "./launcher/runtime-config.ts";
import { vaultWorker } from "./launcher/start-vault.ts";
import { patchPoolWorkers } from "./test/pool-workers-patch.ts";
import { keepConsoleLog } from "./test/request-log-filter.ts";

/**
 * A real Think agent over a cap (test/workers-think/), as another team's
 * Worker would run one: the pool's worker is the agent's
 * (test/workers-think/agent-worker.ts), and the vault is an auxiliary worker
 * built from its real bundle (the launcher's build), bound as `VAULT` (the
 * CapVault entrypoint) and `VAULT_HTTP` (its routes, which the agent's worker
 * passes through, so test/workers/vault.ts's helpers reach the vault). A
 * project of its own, so the `workers` project's files never load the Agents
 * SDK. R2 only: the disk backend is below the cap, and the `workers` project
 * runs CapWorkspace over both.
 */
// See vitest.workers.config.ts: the pool's quadratic wrapping, fixed before it loads.
patchPoolWorkers();

const runtime = readRuntimeConfig(fileURLToPath(new URL("./wrangler.toml", import.meta.url)));
const scratch = mkdtempSync(path.join(os.tmpdir(), "capvault-think-"));
process.once("exit", () => rmSync(scratch, { recursive: true, force: true }));
const vaultScript = await buildWorker(path.join(scratch, "build"));

export default defineConfig({
  plugins: [
    cloudflareTest({
      main: "./test/workers-think/agent-worker.ts",
      miniflare: {
        compatibilityDate: runtime.compatibilityDate,
        compatibilityFlags: runtime.compatibilityFlags,
        durableObjects: { THINK: { className: "ScriptedThinkAgent", useSQLite: true } },
        serviceBindings: { VAULT: { name: "capvault", entrypoint: "CapVault" }, VAULT_HTTP: "capvault" },
        workers: [
          {
            name: "capvault",
            ...vaultWorker(vaultScript, runtime),
            bindings: {
              // test/workers/vault.ts's ADMIN and ORIGIN.
              CAPVAULT_ADMIN_TOKEN: "test-admin-token",
              CAPVAULT_TOKEN_KEY: randomBytes(32).toString("base64url"),
              CAPVAULT_PUBLIC_URL: "https://vault.test",
            },
          },
        ],
      },
    }),
  ],
  test: {
    name: "workers-think",
    // Effective only when this file is the root config; see test/request-log-filter.ts.
    onConsoleLog: keepConsoleLog,
    include: ["test/workers-think/**/*.think.test.ts"],
    // Loads the worker before the file's tests (see the file).
    setupFiles: ["./test/workers/warm-up.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    isolate: false,
  },
});
