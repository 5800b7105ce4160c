import fc from "fast-check";
import type { Backend } from "../shared/wire-types.ts";
import { Findings } from "./findings.ts";
import { consoleSurface } from "./fuzz-console.ts";
import { rpcBatchSurface, rpcSocketSurface } from "./fuzz-rpc.ts";
import { versionsSurface, watchSurface } from "./fuzz-versions.ts";
import { type Report, type SurfaceTarget, surfaceTarget } from "./surface-target.ts";
import type { Row } from "./table.ts";
import type { Fixture } from "./vault-fixture.ts";
import { vaultHealth } from "./vault-health.ts";

/**
 * One fuzzed surface: a generator of symbolic cases (roles, not tokens, so a
 * seed means the same case on R2 and on disk) and how one case is sent and
 * judged. Each surface is its own row of the table.
 */
export interface Surface<C> {
  name: SurfaceName;
  cases: (planted: readonly string[]) => fc.Arbitrary<C>;
  kind: (c: C) => string;
  /** Sends and judges one case; `seen` tallies what came back (an answer's status and code), for the notes. */
  run: (target: SurfaceTarget, c: C, report: Report, seen: (outcome: string) => void) => Promise<void>;
}

export const SURFACE_NAMES = ["rpc-batch", "rpc-socket", "versions", "watch", "console"] as const;
export type SurfaceName = (typeof SURFACE_NAMES)[number];

const IN_FLIGHT = Number(process.env.RELIABILITY_FUZZ_IN_FLIGHT ?? 4);
const HEALTH_EVERY = 1_000;

export interface SurfaceOptions {
  cases: number;
  seed: number;
  /** Replay: only this case index. */
  only?: number;
  /** Only these surfaces (default all). */
  surfaces?: readonly SurfaceName[];
}

/** Every surface's fuzz on one backend, one after the other, each with a health check every thousand cases and at its end. */
export async function runSurfaceFuzz(fixture: Fixture, backend: Backend, options: SurfaceOptions): Promise<Row[]> {
  const target = await surfaceTarget(fixture, backend);
  const rows: Row[] = [];
  for (const name of options.surfaces ?? SURFACE_NAMES) {
    const run = <C>(surface: Surface<C>) => runSurface(fixture, target, surface, options);
    rows.push(
      await (name === "rpc-batch"
        ? run(rpcBatchSurface)
        : name === "rpc-socket"
          ? run(rpcSocketSurface)
          : name === "versions"
            ? run(versionsSurface)
            : name === "watch"
              ? run(watchSurface)
              : run(consoleSurface)),
    );
  }
  return rows;
}

async function runSurface<C>(
  fixture: Fixture,
  target: SurfaceTarget,
  surface: Surface<C>,
  options: SurfaceOptions,
): Promise<Row> {
  const { backend } = target;
  const replay = (index: number | string) =>
    `RELIABILITY_SEED=${options.seed} RELIABILITY_ONLY=fuzz RELIABILITY_SURFACE=${surface.name} RELIABILITY_CASE=${index} RELIABILITY_BACKEND=${backend} npm run reliability`;
  const findings = new Findings(`fuzz ${surface.name}`, replay("<case>"));
  // Each surface its own stream of the seed, so adding one does not shift another's cases.
  const seed = options.seed ^ [...surface.name].reduce((h, ch) => (h * 31 + ch.charCodeAt(0)) | 0, 7);
  const cases = fc.sample(surface.cases(fixture.plantedNames), { seed, numRuns: options.cases });
  const indices = options.only === undefined ? cases.map((_, i) => i) : [options.only];
  let next = 0;
  let tried = 0;
  const outcomes = new Map<string, number>();
  const seen = (outcome: string) => outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  const worker = async () => {
    while (next < indices.length) {
      const index = indices[next++]!;
      const c = cases[index]!;
      const report: Report = (kind, detail) =>
        findings.add(kind, `#${index} ${surface.kind(c)}: ${detail}`, replay(index));
      await surface.run(target, c, report, seen).catch((error: unknown) => report("other", `the case threw: ${error}`));
      tried++;
      if (tried % HEALTH_EVERY === 0)
        for (const p of await vaultHealth(fixture, backend)) findings.add("other", `after ${tried} cases: ${p}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  for (const p of await vaultHealth(fixture, backend)) findings.add("other", `after the fuzz: ${p}`);
  // What the cases met, most common first: a surface whose cases are all refused early tests little.
  const tally = [...outcomes].sort((a, b) => b[1] - a[1]).slice(0, 12);
  const notes = [`${backend}: ${tally.map(([o, n]) => `${o} ×${n}`).join(", ")}`];
  return { check: `fuzz ${surface.name}`, backend, cases: tried, concurrency: IN_FLIGHT, findings, notes };
}
