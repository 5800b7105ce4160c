import { defineConfig } from "vitest/config";

/**
 * The unit tests beside their code (`shared/x.test.ts` next to `shared/x.ts`)
 * and the repository checks in test/ (layering, links): no vault, no workerd.
 * `npm run test:unit` runs these and `unit-workerd` in well under a minute.
 */
export default defineConfig({
  test: {
    name: "unit",
    environment: "node",
    setupFiles: ["./test/node/fetch-setup.ts"],
    include: ["**/*.test.ts"],
    exclude: ["node_modules/**", "**/*.workers.test.ts", "**/*.think.test.ts", "**/*.node.test.ts"],
    // Nothing here changes process-wide state; one fork runs every file.
    isolate: false,
    // The repository checks parse every source file: a few seconds of CPU, more on a loaded machine.
    testTimeout: 30_000,
  },
});
