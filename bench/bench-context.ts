import type { TestVault } from "../test/node/test-vault.ts";
import type { DiskFloor } from "./floor-disk.ts";
import type { R2Floor } from "./floor-r2.ts";

/** How much work each section does. `tiny` keeps the bench working in CI (seconds); `full` is the benchmark. */
export interface BenchSize {
  name: "tiny" | "full";
  /** Interleaved rounds per comparison; figures are medians over rounds. */
  rounds: number;
  /** 1 KiB files read and written per backend. */
  files: number;
  /** Sequential calls per round for a p50. */
  sequential: number;
  /** Calls per round at 16 in flight. */
  inFlightCalls: number;
  largeBytes: number;
  /** Rounds of the large transfers (each moves `largeBytes` up and down, per side and backend). */
  largeRounds: number;
  caps: number;
  /** Vault restarts, each followed by first requests through `coldCaps` caps. */
  restarts: number;
  coldCaps: number;
  depth: number;
  clients: number;
  callsPerClient: number;
}

export const SIZES: Record<BenchSize["name"], BenchSize> = {
  tiny: {
    name: "tiny",
    rounds: 1,
    files: 2,
    sequential: 3,
    inFlightCalls: 16,
    largeBytes: 1024 * 1024,
    largeRounds: 1,
    caps: 6,
    restarts: 1,
    coldCaps: 2,
    depth: 3,
    clients: 4,
    callsPerClient: 3,
  },
  full: {
    name: "full",
    rounds: 5,
    files: 64,
    sequential: 50,
    inFlightCalls: 320,
    largeBytes: 256 * 1024 * 1024,
    largeRounds: 3,
    // Live cap objects on the local runtime past a few thousand make workerd's SQLite fail (docs/scaling.md).
    caps: 2_000,
    restarts: 3,
    coldCaps: 20,
    depth: 64,
    clients: 64,
    callsPerClient: 20,
  },
};

/** What every section gets: a vault on fresh temp state and the floors beside it. */
export interface BenchContext {
  size: BenchSize;
  vault: TestVault;
  r2Floor: R2Floor;
  diskFloor: DiskFloor;
  /** The port of the vault's workerd inspector (bench/isolate-heaps.ts reads it; no session is open otherwise). */
  inspector: number;
  log(line: string): void;
}

export const IN_FLIGHT = 16;
