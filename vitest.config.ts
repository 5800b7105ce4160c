import { accessSync, constants, statSync } from "node:fs";
import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/longest-first-sequencer.ts";
import { keepConsoleLog } from "./test/request-log-filter.ts";

/**
 * Test state in memory when the machine has a tmpfs. The suite fsyncs a lot:
 * every Durable Object write is a SQLite commit, every disk-backend write two
 * fsyncs, and each test starts vaults with fresh state folders. On a virtual
 * disk those waits were a fifth of `npm test`'s time (376 s on /tmp, 307 s on
 * /dev/shm, same clone, 2 cores). What the tests check is unchanged: a
 * "crash" here is a SIGKILL, whose writes the page cache keeps on either
 * file system; links, renames and O_NOFOLLOW behave the same. A TMPDIR the
 * user set is kept. Set before the projects load: they make their folders
 * with os.tmpdir(), and the test processes inherit the variable.
 */
function memoryTmpdir(): string | undefined {
  try {
    if (!statSync("/dev/shm").isDirectory()) return undefined;
    accessSync("/dev/shm", constants.W_OK);
    return "/dev/shm";
  } catch {
    return undefined;
  }
}
const inMemory = process.env.TMPDIR ? undefined : memoryTmpdir();
// (process.env turns an undefined value into the string "undefined".)
if (inMemory) process.env.TMPDIR = inMemory;

/**
 * Five projects. `workers` runs test/workers inside workerd (the worker, its
 * Durable Objects and R2, via the cloudflareTest plugin); `workers-think` a
 * real Think agent over a cap, the vault an auxiliary worker (test/workers-think/);
 * `node` runs the
 * end-to-end files, *.node.test.ts (the launcher, disk host, clients against
 * a running vault); `unit` every unit test beside its code (`shared/x.test.ts`
 * next to `shared/x.ts`) and the repository checks; `unit-workerd` the unit
 * tests of shared/ and clients/typescript/, code that runs inside workerd in
 * production, there as well. One project: `npm run test:unit`, `test:node`, `test:workers`.
 */
export default defineConfig({
  test: {
    // Most test files wait on workerd, launcher processes and fsyncs rather
    // than compute, so more run at once than there are cores (docs/benchmarks.md).
    maxWorkers: 6,
    // Read from the root config only: the workers project's request lines are dropped here.
    onConsoleLog: keepConsoleLog,
    // The slowest files first, whatever their project (see test/longest-first-sequencer.ts).
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      "./vitest.workers.config.ts",
      "./vitest.think.config.ts",
      "./vitest.unit-workerd.config.ts",
      "./vitest.node.config.ts",
      "./vitest.unit.config.ts",
    ],
  },
});
