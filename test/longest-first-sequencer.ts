import path from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds each slow file took in a whole `npm test` on two busy cores (the
 * files under 20 s are left out). Only their order matters: a clone with no
 * vitest cache (CI) starts these first.
 */
const EXPECTED_SECONDS: Record<string, number> = {
  "node:test/node/bisimulation.node.test.ts": 315,
  "node:test/node/python-client.node.test.ts": 256,
  "workers:test/workers/contract.workers.test.ts": 184,
  "workers:test/workers/revocation.workers.test.ts": 166,
  "node:test/node/disk-crash.node.test.ts": 152,
  "workers:test/workers/children.workers.test.ts": 127,
  "node:test/node/memory-tool.node.test.ts": 127,
  "node:test/node/reliability.node.test.ts": 124,
  "node:test/node/launcher.node.test.ts": 89,
  "node:bench/bench-tiny.node.test.ts": 83,
  "node:test/node/side-doors.node.test.ts": 68,
  "workers:test/workers/uploads-cut.workers.test.ts": 65,
  "node:test/node/mcp-endpoint.node.test.ts": 63,
  "node:test/node/cli.node.test.ts": 62,
  "workers:test/workers/bisim-regressions.workers.test.ts": 59,
  "node:test/node/fs-cap.node.test.ts": 38,
  "node:test/node/forged-tokens.node.test.ts": 36,
  "workers:test/workers/audit.workers.test.ts": 36,
  "node:test/node/memory-links.node.test.ts": 31,
  "node:test/node/disk-deep-paths.node.test.ts": 30,
  "workers:test/workers/content-hints.workers.test.ts": 30,
  "node:test/node/disk-read-path.node.test.ts": 30,
  "node:test/node/memory-route.node.test.ts": 24,
  "workers:test/workers/r2-subrequests.workers.test.ts": 22,
  "workers:test/workers/isolation.workers.test.ts": 20,
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
