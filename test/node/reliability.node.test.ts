/**
 * `npm run reliability` at a small but meaningful size, inside `npm test`:
 * 500 seeded fuzz cases per backend against the real launcher (and 100 more
 * for each further surface: RPC batch and WebSocket, versions, watch, the
 * console's calls), 16 clients for
 * 5 s of mixed load, the If-Match counter and the revocation race on both
 * backends, and one SIGKILL of the launcher during small writes on both
 * backends and a revocation cascade. Every count that must be zero is zero.
 * A refusal answered without `Connection: close` leaves its connection usable.
 *
 * Reproduce a failure: RELIABILITY_SEED=<seed> npx vitest run --config vitest.node.config.ts test/node/reliability.node.test.ts
 * (the full size: RELIABILITY_SEED=<seed> npm run reliability).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { SURFACE_NAMES } from "../../reliability/fuzz-surfaces.ts";
import { SCALES } from "../../reliability/scale.ts";
import { runSuite } from "../../reliability/suite.ts";
import { type Row, tableText } from "../../reliability/table.ts";

const SEED = process.env.RELIABILITY_SEED
  ? Number(process.env.RELIABILITY_SEED)
  : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const SCALE = SCALES.small;

let rows: Row[] = [];

beforeAll(async () => {
  console.log(`reliability seed ${SEED} (replay: RELIABILITY_SEED=${SEED})`);
  rows = (await runSuite({ scale: SCALE, seed: SEED, log: (line) => console.log(line) })).rows;
  console.log(tableText(rows));
  for (const row of rows) for (const note of row.notes ?? []) console.log(`${row.check}: ${note}`);
}, 300_000);

/** The findings of the rows whose check starts with `prefix`, except dropped connections (shown, not failed). */
function problems(prefix: string): string[] {
  return rows
    .filter((r) => r.check.startsWith(prefix))
    .flatMap((r) =>
      r.findings.all
        .filter((f) => f.kind !== "drop")
        .map((f) => `[${f.kind}] ${r.check} ${r.backend}: ${f.detail} (replay: ${f.replay})`),
    );
}

describe(`reliability at test size (seed ${SEED})`, () => {
  it("fuzz: every case answered, no 5xx, no prefix, host path or outside byte, only contract codes, vault healthy after", () => {
    const fuzz = rows.filter((r) => r.check === "fuzz");
    expect(fuzz.map((r) => [r.backend, r.cases]).sort()).toEqual([
      ["disk", SCALE.fuzzCases],
      ["r2", SCALE.fuzzCases],
    ]);
    expect(problems("fuzz")).toEqual([]);
  });

  it("fuzz of the further surfaces: each its own row per backend, every case run", () => {
    const surfaces = rows.filter((r) => r.check.startsWith("fuzz ")).map((r) => `${r.check} ${r.backend} ${r.cases}`);
    expect(surfaces.sort()).toEqual(
      [
        ...SURFACE_NAMES.flatMap((s) => ["disk", "r2"].map((b) => `fuzz ${s} ${b} ${SCALE.surfaceCases}`)),
        // The service binding's (reliability/fuzz-binding.ts): a vault of its own beside a consumer Worker, R2.
        `fuzz binding r2 ${SCALE.surfaceCases}`,
      ].sort(),
    );
    expect(problems("fuzz binding")).toEqual([]);
  });

  it("load: zero 5xx under concurrent mixed operations, no lost update, no success after a revocation answered", () => {
    const load = rows.filter((r) => r.check.startsWith("load"));
    expect(load.map((r) => `${r.check} ${r.backend}`).sort()).toEqual([
      "load: counter (If-Match) disk",
      "load: counter (If-Match) r2",
      "load: mixed r2+disk",
      "load: revocation race disk",
      "load: revocation race r2",
    ]);
    // The counter landed every increment it was asked for, under contention.
    for (const r of load.filter((r) => r.check.startsWith("load: counter")))
      expect(r.cases).toBe(SCALE.counterClients * SCALE.counterIncrements);
    expect(problems("load")).toEqual([]);
  });

  it("keep-alive: a connection answered a refusal without Connection: close takes the next request", () => {
    const rows_ = rows.filter((r) => r.check.startsWith("http: keep-alive"));
    expect(rows_.map((r) => r.backend).sort()).toEqual(["disk", "r2"]);
    expect(problems("http: keep-alive")).toEqual([]);
  });

  it("faults: after a SIGKILL mid-write and mid-cascade, files are old or new, caps alive or revoked, no temp left", () => {
    const faults = rows.filter((r) => r.check.startsWith("faults"));
    expect(faults.map((r) => r.faults)).toEqual([1]);
    expect(problems("faults")).toEqual([]);
  });
});
