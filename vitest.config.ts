import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/longest-first-sequencer.ts";
import { keepConsoleLog } from "./test/request-log-filter.ts";

/**
 * Three projects. `workers` runs test/workers inside workerd (the worker, its
 * Durable Objects and R2, via the cloudflareTest plugin); `node` runs
 * test/node (the launcher, disk host and end-to-end tests against a running
 * vault) and every unit test beside its code (`shared/x.test.ts` next to
 * `shared/x.ts`); `unit-workerd` runs the unit tests of shared/ and clients/typescript/,
 * code that runs inside workerd in production, there as well.
 */
export default defineConfig({
  test: {
    // Most test files wait on workerd and launcher processes rather than
    // compute; the default of one worker per spare core (one, here) ran them
    // one after another.
    maxWorkers: 4,
    // Read from the root config only: the workers project's request lines are dropped here.
    onConsoleLog: keepConsoleLog,
    // The slowest files first, whatever their project (see test/longest-first-sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    projects: ["./vitest.workers.config.ts", "./vitest.unit-workerd.config.ts", "./vitest.node.config.ts"],
  },
});
