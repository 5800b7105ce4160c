import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each slow file's tests took in a whole `npm test`, two cores (the
 * files under 8 s are left out). Only their order matters: a
 * clone with no vitest cache (CI) starts these first, and a slow file missing
 * here starts after all of them (add it when you add one).
 */
const EXPECTED_SECONDS: Record<string, number> = {
  "node:test/node/state-fixtures.node.test.ts": 130,
  "node:test/node/reliability.node.test.ts": 73,
  "node:test/node/python-client.node.test.ts": 71,
  "node:test/node/launcher.node.test.ts": 62,
  "node:test/node/bisimulation.node.test.ts": 57,
  "node:bench/bench-tiny.node.test.ts": 41,
  "node:test/node/console-holder.node.test.ts": 36,
  "workers:test/workers/rights-matrix.workers.test.ts": 36,
  "node:test/node/console.node.test.ts": 35,
  "node:test/node/side-doors.node.test.ts": 33,
  "node:test/node/mcp-skills.node.test.ts": 31,
  "node:test/node/quotas-restart.node.test.ts": 30,
  "node:test/node/webdav.node.test.ts": 30,
  "node:test/node/disk-crash.node.test.ts": 29,
  "node:test/node/mcp-request-bounds.node.test.ts": 29,
  "node:test/node/npm-package.node.test.ts": 23,
  "node:test/node/oauth-browser.node.test.ts": 22,
  "node:test/node/forged-tokens.node.test.ts": 20,
  "node:test/node/rpc.node.test.ts": 19,
  "node:test/node/content-search.node.test.ts": 18,
  "node:test/node/redaction-bytes.node.test.ts": 18,
  "workers:test/workers/uploads-cut.workers.test.ts": 18,
  "node:test/node/cli.node.test.ts": 17,
  "node:test/node/oauth-sdk.node.test.ts": 16,
  "node:test/node/memory-parity.node.test.ts": 15,
  "workers:test/workers/contract.workers.test.ts": 15,
  "workers:test/workers/watch-limits.workers.test.ts": 14,
  "node:test/node/memory-tool.node.test.ts": 13,
  "node:test/node/console-history.node.test.ts": 12,
  "workers:test/workers/content-hashes.workers.test.ts": 12,
  "workers:test/workers/revocation.workers.test.ts": 12,
  "node:test/node/cli-transfer.node.test.ts": 11,
  "node:test/node/memory-links.node.test.ts": 11,
  "node:test/node/fs-cap.node.test.ts": 10,
  "node:test/node/hermes-mcp-vectors.node.test.ts": 10,
  "workers:test/workers/holder-binding.workers.test.ts": 10,
  "workers:test/workers/versions.workers.test.ts": 10,
  "workers:test/workers/watch.workers.test.ts": 10,
  "workers:test/workers/write-guards.workers.test.ts": 10,
  "node:test/layering.test.ts": 9,
  "node:test/node/disk-deep-paths.node.test.ts": 9,
  "workers:test/workers/content-search.workers.test.ts": 9,
  "workers:test/workers/oauth-dpop.workers.test.ts": 9,
  "workers:test/workers/tree-listing.workers.test.ts": 9,
  "workers:test/workers/bisim-regressions.workers.test.ts": 8,
  "workers:test/workers/content-hints.workers.test.ts": 8,
  "workers:test/workers/watch-resume-scope.workers.test.ts": 8,
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
