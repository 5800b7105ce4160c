import { defineConfig } from "vitest/config";

/**
 * Two projects: `workers` runs inside workerd (the worker, its Durable
 * Objects and R2, via the cloudflareTest plugin); `node` covers the launcher,
 * disk host, clients and end-to-end tests against a running vault.
 */
export default defineConfig({
  test: {
    // Most test files wait on workerd and launcher processes rather than
    // compute; the default of one worker per spare core (one, here) ran them
    // one after another.
    maxWorkers: 4,
    projects: ["./vitest.workers.config.ts", "./vitest.node.config.ts"],
  },
});
