/**
 * Bench section: mint a tree of caps (1 root + 10 + 100 + 1,000) over HTTP,
 * revoke its root, and check that every member then answers `no_such_cap`.
 * A benchmark, not a test: it reports figures, and the one correctness count
 * it returns (`alive after revoke`) is for the table, not an assertion.
 *
 * Standalone: `npx tsx bench/revocation-tree.ts [--fan-out 10,10,10] [--in-flight 16]`
 * starts its own vault on fresh temp state.
 */
import { pathToFileURL } from "node:url";
import { startObjectTreeFloor } from "./object-tree-floor.ts";
import { groupCpuMs } from "./proc-stats.ts";

export interface BenchVault {
  /** The vault's origin, e.g. `http://127.0.0.1:8787`. */
  url: string;
  adminToken: string;
  /** The vault's process group, when it runs on this machine: CPU time is then reported too. */
  pgid?: number;
}

export interface RevocationTreeOptions {
  /** Children per cap at each level below the root; the default is the 10, 10, 10. */
  fanOut?: number[];
  /** HTTP requests in flight at once while minting and checking. */
  inFlight?: number;
  /** Also mint and kill the same tree of bare objects (bench/object-tree-floor.ts); on unless false. */
  floor?: boolean;
}

/** One line of the bench table: `value` in `unit`, with its target when the issue sets one. */
export interface BenchRow {
  row: string;
  value: number;
  unit: string;
  target: string | null;
  met: boolean | null;
  /** The same work done by the floor of bare objects, when it ran. */
  floor?: { value: number; name: string };
}

const DEFAULT_FAN_OUT = [10, 10, 10];
const DEFAULT_IN_FLIGHT = 16;
/** Issue 25's: mint the 1,111-cap tree under 3 s, revoke it under 1 s. */
const MINT_TARGET_MS = 3_000;
const REVOKE_TARGET_MS = 1_000;

export async function revocationTree(base: BenchVault, options: RevocationTreeOptions = {}): Promise<BenchRow[]> {
  const fanOut = options.fanOut ?? DEFAULT_FAN_OUT;
  const inFlight = options.inFlight ?? DEFAULT_IN_FLIGHT;
  const origin = base.url.replace(/\/+$/, "");
  const root = await mintRoot(origin, base.adminToken);

  // Level by level: every cap of one level is minted before the next starts,
  // and all mints of a level run concurrently (each under its own parent).
  const cpu = cpuMeter(base.pgid);
  const c0 = await cpu();
  const t0 = performance.now();
  const members = [root];
  let level = [root];
  for (const width of fanOut) {
    const asks = level.flatMap((parent) => Array.from({ length: width }, () => parent));
    level = await bounded(asks, inFlight, (parent) => mintChild(parent));
    members.push(...level);
  }
  const mintMs = performance.now() - t0;
  const c1 = await cpu();

  const t1 = performance.now();
  // Not sent twice: a second DELETE would answer no_such_cap and hide the first one's time.
  const revoke = await send(root, { method: "DELETE" }, 1);
  await revoke.arrayBuffer();
  const revokeMs = performance.now() - t1;
  const c2 = await cpu();
  if (revoke.status !== 204 && revoke.status !== 202) throw new Error(`revoking the root answered ${revoke.status}`);

  const t2 = performance.now();
  const answers = await bounded(members, inFlight, deadOrAlive);
  const checkMs = performance.now() - t2;
  const alive = answers.filter((dead) => !dead).length;

  const c3 = await cpu();
  const caps = members.length;
  const floor = options.floor === false ? null : await objectTree(fanOut, inFlight);
  const floorOf = (value: number | undefined) =>
    value === undefined ? {} : { floor: { value, name: `${caps} bare objects (object-tree-floor.ts)` } };
  const rows: BenchRow[] = [
    {
      row: `mint tree of ${caps} caps`,
      value: mintMs,
      unit: "ms",
      ...within(mintMs, MINT_TARGET_MS),
      ...floorOf(floor?.mintMs),
    },
    {
      row: `revoke tree of ${caps} caps`,
      value: revokeMs,
      unit: "ms",
      ...within(revokeMs, REVOKE_TARGET_MS),
      ...floorOf(floor?.killMs),
    },
    { row: `check ${caps} caps dead`, value: checkMs, unit: "ms", target: null, met: null },
    { row: "alive after revoke", value: alive, unit: "caps", target: "0", met: alive === 0 },
  ];
  // CPU time of the vault's processes: on a shared machine it says what the
  // vault itself spent, where wall time also counts everyone else's load.
  if (c0 !== null && c1 !== null && c2 !== null && c3 !== null) {
    rows.push(
      {
        row: "  vault CPU while minting",
        value: c1 - c0,
        unit: "ms",
        target: null,
        met: null,
        ...floorOf(floor?.mintCpu),
      },
      {
        row: "  vault CPU while revoking",
        value: c2 - c1,
        unit: "ms",
        target: null,
        met: null,
        ...floorOf(floor?.killCpu),
      },
      { row: "  vault CPU while checking", value: c3 - c2, unit: "ms", target: null, met: null },
    );
  }
  return rows;
}

/**
 * The same tree minted level by level and killed from its root, in bare
 * objects: wall time and the floor's workerd CPU for each. Run after the
 * vault's tree, on the same machine in the same minutes.
 */
async function objectTree(fanOut: number[], inFlight: number) {
  const floor = await startObjectTreeFloor();
  try {
    const c0 = await floor.cpuMs();
    const t0 = performance.now();
    const root = await floor.mint(null);
    let level = [root];
    for (const width of fanOut) {
      const asks = level.flatMap((parent) => Array.from({ length: width }, () => parent));
      level = await bounded(asks, inFlight, (parent) => floor.mint(parent));
    }
    const mintMs = performance.now() - t0;
    const c1 = await floor.cpuMs();
    const t1 = performance.now();
    await floor.kill(root);
    const killMs = performance.now() - t1;
    const c2 = await floor.cpuMs();
    return { mintMs, killMs, mintCpu: c1 - c0, killCpu: c2 - c1 };
  } finally {
    await floor.stop();
  }
}

/** Reads the user + system CPU time (ms) of every process in `pgid`, or null off this machine. */
function cpuMeter(pgid: number | undefined): () => Promise<number | null> {
  return async () => (pgid === undefined || process.platform !== "linux" ? null : groupCpuMs(pgid));
}

function within(ms: number, target: number): Pick<BenchRow, "target" | "met"> {
  return { target: `≤ ${target} ms`, met: ms <= target };
}

/**
 * fetch, sent again when the connection failed before any answer (on a
 * loaded machine a pooled connection is sometimes reset under a request). A
 * mint sent twice makes one extra child, which the revocation reaches too.
 */
async function send(url: string, init: RequestInit = {}, tries = 3): Promise<Response> {
  for (let i = 1; ; i++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      if (i >= tries) throw error;
    }
  }
}

async function mintRoot(origin: string, adminToken: string): Promise<string> {
  const res = await send(`${origin}/admin/roots`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ backend: "r2", prefix: `bench-revocation-${Date.now()}/`, label: "revocation bench" }),
  });
  if (res.status !== 201) throw new Error(`minting the root answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { url: string }).url;
}

async function mintChild(parent: string): Promise<string> {
  const res = await send(`${parent}/subdir`, { method: "POST", body: JSON.stringify({ path: "" }) });
  if (res.status !== 201) throw new Error(`minting a child answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { url: string }).url;
}

/** True when the cap answers exactly as a revoked one must: 404 `no_such_cap`. */
async function deadOrAlive(cap: string): Promise<boolean> {
  const res = await send(cap);
  const body = (await res.json().catch(() => null)) as { error?: { code?: string } } | null;
  return res.status === 404 && body?.error?.code === "no_such_cap";
}

/** Runs `run` over `items` with at most `limit` in flight, keeping the order of `items`. */
async function bounded<T, R>(items: readonly T[], limit: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await run(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { startTestVault } = await import("../test/node/test-vault.ts");
  const fanOut = flag("--fan-out")?.split(",").map(Number);
  const inFlight = flag("--in-flight");
  const vault = await startTestVault();
  try {
    const rows = await revocationTree(vault, { fanOut, inFlight: inFlight ? Number(inFlight) : undefined });
    for (const r of rows) {
      const met = r.met === null ? "" : r.met ? "  met" : "  NOT met";
      const floor = r.floor ? `  (floor ${r.floor.value.toFixed(0)})` : "";
      console.log(
        `${r.row.padEnd(28)} ${r.value.toFixed(0).padStart(7)} ${r.unit.padEnd(5)} ${r.target ?? ""}${met}${floor}`,
      );
    }
  } finally {
    await vault.stop();
  }
}
