import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

// wrangler.toml declares the admin token as a required secret; tests supply their own.
process.env.CAPVAULT_ADMIN_TOKEN ??= "test-admin-token";

export default defineConfig({
  plugins: [
    cloudflareTest({
      main: "./worker/index.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: { CAPVAULT_ADMIN_TOKEN: "test-admin-token", CAPVAULT_MAX_FILE_BYTES: String(1024 * 1024) },
      },
    }),
  ],
  test: {
    name: "workers",
    // The request log is tested in the launcher tests; here it is noise.
    onConsoleLog: (log) => !/^(GET|HEAD|PUT|POST|DELETE|PATCH) \//.test(log),
    include: ["**/*.workers.test.ts"],
    exclude: ["node_modules/**"],
  },
});
