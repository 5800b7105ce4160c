/**
 * How big a reliability run is. `full` is the size the project promises
 * (`npm run reliability`); `small` is what `npm test` runs: every check still
 * meaningful (real kills, real races), just fewer cases and shorter load.
 */
export interface Scale {
  name: "small" | "full";
  /** Fuzz cases per backend. */
  fuzzCases: number;
  /** Fuzz cases per backend for each further surface (RPC batch, RPC socket, versions, watch, console). */
  surfaceCases: number;
  /** Rounds of SIGKILL during concurrent small writes (both backends at once). */
  smallWriteKills: number;
  /** Size of the big write killed mid-stream, per backend; 0 skips it. */
  bigWriteBytes: number;
  /** Caps in the revocation cascade killed mid-way. */
  cascadeCaps: number;
  loadClients: number;
  loadSeconds: number;
  counterClients: number;
  /** Increments each counter client must land (all clients contend on one file: each round lands one). */
  counterIncrements: number;
  raceClients: number;
}

const MiB = 1024 * 1024;

export const SCALES: Record<Scale["name"], Scale> = {
  small: {
    name: "small",
    fuzzCases: 500,
    surfaceCases: 100,
    smallWriteKills: 1,
    bigWriteBytes: 0,
    cascadeCaps: 40,
    loadClients: 16,
    loadSeconds: 5,
    counterClients: 6,
    counterIncrements: 2,
    raceClients: 16,
  },
  full: {
    name: "full",
    fuzzCases: 10_000,
    surfaceCases: 2_000,
    smallWriteKills: 2,
    bigWriteBytes: 256 * MiB,
    cascadeCaps: 1000,
    loadClients: 64,
    loadSeconds: 60,
    counterClients: 16,
    counterIncrements: 3,
    raceClients: 16,
  },
};

export function scaleFromEnv(value = process.env.RELIABILITY_SCALE): Scale {
  if (value === undefined || value === "" || value === "full") return SCALES.full;
  if (value === "small") return SCALES.small;
  throw new Error(`RELIABILITY_SCALE must be "small" or "full", not ${JSON.stringify(value)}`);
}
