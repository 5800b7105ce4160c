import type { Backend } from "../shared/wire-types.ts";
import { runFaults } from "./faults-run.ts";
import { runBindingFuzz } from "./fuzz-binding.ts";
import { runFuzz } from "./fuzz-run.ts";
import { runSurfaceFuzz, type SurfaceName } from "./fuzz-surfaces.ts";
import { runKeepAlive } from "./http-keepalive.ts";
import { runCounter } from "./load-counter.ts";
import { runMixedLoad } from "./load-mixed.ts";
import { runRevocationRace } from "./load-revocation-race.ts";
import type { Scale } from "./scale.ts";
import type { Row } from "./table.ts";
import { BACKENDS, type Fixture, openFixture } from "./vault-fixture.ts";

export type Part = "fuzz" | "load" | "faults";

export interface SuiteOptions {
  scale: Scale;
  seed: number;
  /** Run only these parts (default all). */
  only?: readonly Part[];
  backends?: readonly Backend[];
  /** Fuzz replay: only this case index. */
  fuzzCase?: number;
  /**
   * Only these fuzz surfaces; "http" is the HTTP, MCP and memory fuzz, "binding" the service binding's
   * (a vault of its own beside a consumer Worker, R2 only). Default all.
   */
  surfaces?: readonly (SurfaceName | "http" | "binding")[];
  log?: (line: string) => void;
}

/**
 * The whole reliability run on one real launcher with fresh temp state:
 * fuzz, then load, then the faults (last, since they kill and restart it).
 * Returns one table row per check; the caller prints and judges them.
 */
export async function runSuite(options: SuiteOptions): Promise<{ rows: Row[]; fixture: Fixture }> {
  const { scale, seed } = options;
  const parts = new Set(options.only ?? ["fuzz", "load", "faults"]);
  const backends = options.backends ?? BACKENDS;
  const log = options.log ?? (() => undefined);
  const maxBytes = Math.max(scale.bigWriteBytes + (1 << 20), 4 << 20);
  const fixture = await openFixture({ env: { CAPVAULT_MAX_FILE_BYTES: String(maxBytes) } });
  const rows: Row[] = [];
  const step = async (name: string, run: () => Promise<Row | Row[]>) => {
    const t = Date.now();
    const out = await run();
    rows.push(...(Array.isArray(out) ? out : [out]));
    log(`${name}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  };
  try {
    if (parts.has("fuzz")) {
      await Promise.all(
        backends.map((backend) =>
          step(`fuzz ${backend}`, async () => {
            const surfaces = options.surfaces;
            const out: Row[] = [];
            if (!surfaces || surfaces.includes("http"))
              out.push((await runFuzz(fixture, backend, { cases: scale.fuzzCases, seed, only: options.fuzzCase })).row);
            const further = surfaces?.filter((s): s is SurfaceName => s !== "http" && s !== "binding");
            if (!surfaces || further!.length > 0)
              out.push(
                ...(await runSurfaceFuzz(fixture, backend, {
                  cases: scale.surfaceCases,
                  seed,
                  only: options.fuzzCase,
                  ...(further ? { surfaces: further } : {}),
                })),
              );
            return out;
          }),
        ),
      );
      if (!options.surfaces || options.surfaces.includes("binding"))
        await step("fuzz binding", () =>
          runBindingFuzz({
            cases: scale.surfaceCases,
            seed,
            ...(options.fuzzCase !== undefined ? { only: options.fuzzCase } : {}),
          }),
        );
      for (const backend of backends) await step(`keep-alive ${backend}`, () => runKeepAlive(fixture, backend));
    }
    if (parts.has("load")) {
      await step("mixed load", () => runMixedLoad(fixture, scale.loadClients, scale.loadSeconds, seed));
      for (const backend of backends)
        await step(`counter ${backend}`, () =>
          runCounter(fixture, backend, scale.counterClients, scale.counterIncrements),
        );
      for (const backend of backends)
        await step(`revocation race ${backend}`, () => runRevocationRace(fixture, backend, scale.raceClients));
    }
    if (parts.has("faults")) await step("faults", () => runFaults(fixture, scale, seed));
    return { rows, fixture };
  } finally {
    await fixture.vault.stop();
  }
}
