import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each slow file's tests took in a whole `npm test`, two cores (the
 * files under 8 s are left out). Only their order matters: a
 * clone with no vitest cache (CI) starts these first, and a slow file missing
 * here starts after all of them (add it when you add one).
 */
const EXPECTED_SECONDS: Record<string, number> = {
  "node:test/node/bisimulation.node.test.ts": 66,
  "node:test/node/python-client.node.test.ts": 50,
  "node:bench/bench-tiny.node.test.ts": 42,
  "node:test/node/launcher.node.test.ts": 39,
  "node:test/node/cli.node.test.ts": 36,
  "node:test/node/rpc.node.test.ts": 26,
  "node:test/node/mcp-endpoint.node.test.ts": 12,
  "node:test/node/mcp-request-bounds.node.test.ts": 10,
  "node:test/node/mcp-official-tools.node.test.ts": 6,
  "node:test/node/mcp-transport.node.test.ts": 6,
  "workers:test/workers/contract.workers.test.ts": 31,
  "node:test/node/console.node.test.ts": 30,
  "workers:test/workers/uploads-cut.workers.test.ts": 27,
  "node:test/node/disk-crash.node.test.ts": 26,
  "workers:test/workers/versions.workers.test.ts": 25,
  "node:test/node/oauth-browser.node.test.ts": 24,
  "node:test/node/cli-transfer.node.test.ts": 23,
  "workers:test/workers/revocation.workers.test.ts": 21,
  "node:test/node/memory-tool.node.test.ts": 20,
  "node:test/node/quotas-restart.node.test.ts": 19,
  "node:test/node/npm-package.node.test.ts": 19,
  "workers:test/workers/bisim-regressions.workers.test.ts": 16,
  "workers:test/workers/tree-listing.workers.test.ts": 15,
  "workers:test/workers/quotas.workers.test.ts": 14,
  "node:test/node/tree-walk.node.test.ts": 14,
  "workers:test/workers/watch.workers.test.ts": 14,
  "node:test/node/console-history.node.test.ts": 14,
  "workers:test/workers/content-hints.workers.test.ts": 12,
  "node:test/node/console-holder.node.test.ts": 12,
  "workers:test/workers/audit.workers.test.ts": 11,
  "node:test/node/forged-tokens.node.test.ts": 11,
  "workers:test/workers/watch-limits.workers.test.ts": 11,
  "node:test/node/cli-versions.node.test.ts": 10,
  "workers:test/workers/children.workers.test.ts": 9,
  "node:test/node/mcp-versions.node.test.ts": 9,
  "node:test/node/fs-cap.node.test.ts": 5,
  "node:test/node/fs-cap-caps.node.test.ts": 4,
  "node:test/node/disk-races.node.test.ts": 9,
  "workers:test/workers/r2-subrequests.workers.test.ts": 8,
  "node:test/node/console-scripts.node.test.ts": 8,
};

/**
 * Longest first, across all three projects. vitest's own order runs the
 * projects one after another (by name) and, with no cache, a project's
 * files by size: the workers project's two-minute files started last, and a
 * small file with a long run (python-client, reliability) late, so the run
 * ended on a tail of one or two files while the other slots idled. Failed
 * files still go first; a file's last duration in the cache (a local run)
 * wins over the table above; unknown files keep vitest's order among
 * themselves, after the known ones.
 */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const vitestOrder = await super.sort(files);
    const rank = new Map(vitestOrder.map((file, i) => [file, i]));
    const cache = this.ctx.cache;
    const key = (file: TestSpecification) =>
      `${file.project.name}:${path.relative(this.ctx.config.root, file.moduleId).split(path.sep).join("/")}`;
    const weight = (file: TestSpecification): number => {
      const cached = cache.getFileTestResults(key(file));
      if (cached?.failed) return Number.POSITIVE_INFINITY;
      return cached?.duration ?? (EXPECTED_SECONDS[key(file)] ?? 0) * 1000;
    };
    return [...vitestOrder].sort((a, b) => weight(b) - weight(a) || rank.get(a)! - rank.get(b)!);
  }
}
