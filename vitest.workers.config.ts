import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";
import { createDiskHost } from "./disk-host/index.ts";
import { serveOnUnixSocket } from "./disk-host/socket-server.ts";
import { patchPoolWorkers } from "./test/pool-workers-patch.ts";
import { keepConsoleLog } from "./test/request-log-filter.ts";

// Before the pool loads its worker-side files (see the patch's comment: minutes of `npm test`).
patchPoolWorkers();

// wrangler.toml declares the admin token and the token key as required secrets; tests supply their own.
process.env.CAPVAULT_ADMIN_TOKEN ??= "test-admin-token";
// The key that signs cap tokens, new for every run as the launcher's is for every state folder.
const TOKEN_KEY = randomBytes(32).toString("base64url");
process.env.CAPVAULT_TOKEN_KEY ??= TOKEN_KEY;

// The real Node disk host, plugged in exactly as the launcher does it, so the
// same suites run against R2 and against a real folder.
// One temp folder for the disk root and the socket, removed when the run ends.
const scratch = mkdtempSync(path.join(os.tmpdir(), "capvault-workers-"));
process.once("exit", () => rmSync(scratch, { recursive: true, force: true }));
const diskRoot = path.join(scratch, "disk");
const diskSecret = randomBytes(32).toString("base64url");
const disk = createDiskHost({ baseDir: diskRoot, secret: diskSecret });
// Reached over a Unix socket, exactly as under the launcher (not through Miniflare's loopback server).
const socketPath = path.join(scratch, "disk.sock");
(await serveOnUnixSocket((request) => disk.serve(request), socketPath)).unref();

export default defineConfig({
  plugins: [
    cloudflareTest({
      main: "./worker/index.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: {
          CAPVAULT_ADMIN_TOKEN: "test-admin-token",
          CAPVAULT_TOKEN_KEY: TOKEN_KEY,
          CAPVAULT_MAX_FILE_BYTES: String(1024 * 1024),
          // test/workers/vault.ts's ORIGIN, as the launcher sets its own.
          CAPVAULT_PUBLIC_URL: "https://vault.test",
          TEST_DISK_ROOT: diskRoot,
          CAPVAULT_DISK_SECRET: diskSecret,
        },
        serviceBindings: { DISK: { external: { address: `unix:${socketPath}`, http: {} } } },
      },
    }),
  ],
  test: {
    name: "workers",
    // Effective only when this file is the root config (one workers file run alone); see test/request-log-filter.ts.
    onConsoleLog: keepConsoleLog,
    include: ["**/*.workers.test.ts"],
    // Loads the worker before each file's tests (see the file).
    setupFiles: ["./test/workers/warm-up.ts"],
    // These are integration tests (trees of caps, every route, both backends), not
    // unit tests: on two busy cores some take seconds. Races are synchronised, never slept through.
    testTimeout: 30_000,
    // A hook does a test's kind of work: a file's first request there loads the worker's modules.
    hookTimeout: 30_000,
    exclude: ["node_modules/**"],
    // A workerd started for one file runs the next, as the node project's forks do: a fresh one
    // per file costs more than most files' tests (test/pool-workers-patch.ts keeps a reused one
    // fast). Each file mints roots under prefixes of its own and compares Durable Object ids
    // before and after, never their total.
    isolate: false,
  },
});
