import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "node",
    environment: "node",
    setupFiles: ["./test/node/fetch-setup.ts"],
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "**/*.workers.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
