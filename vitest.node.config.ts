import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    name: "node",
    environment: "node",
    setupFiles: ["./test/node/fetch-setup.ts"],
    // One vault for the files that only need a vault (test/node/shared-vault.ts).
    globalSetup: ["./test/node/shared-vault-setup.ts"],
    // End-to-end files (a vault, a launcher, a client process) are named *.node.test.ts; unit tests are `unit`'s.
    include: ["**/*.node.test.ts"],
    exclude: ["node_modules/**"],
    // A fork started for one file runs the next (about 0.6 s of CPU saved per file). No test
    // here changes process-wide state (env, cwd, globals, timers left faked); each file uses
    // the shared vault or starts and stops its own.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
