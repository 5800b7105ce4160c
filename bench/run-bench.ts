import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startTestVault } from "../test/node/test-vault.ts";
import type { BenchContext, BenchSize } from "./bench-context.ts";
import type { Row } from "./bench-row.ts";
import { startDiskFloor } from "./floor-disk.ts";
import { startR2Floor } from "./floor-r2.ts";
import { resent } from "./http-ops.ts";
import { SECTIONS } from "./sections.ts";
import { formatTable } from "./table.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));

export interface BenchResults {
  date: string;
  commit: string;
  node: string;
  size: BenchSize;
  sections: string[];
  rows: Row[];
  /** Requests sent again after meeting a connection the server had closed (see http-ops.ts). */
  resent: number;
}

/** A loopback port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function commit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

/**
 * Starts a vault on fresh temp state (the real launcher) and the floors over
 * its storage (the floor worker, the disk floor, and the disk floor on a unix
 * socket that the floor worker reaches), runs `sections` in order, and stops everything.
 */
export async function runBench(
  size: BenchSize,
  sections: readonly string[],
  log: (line: string) => void,
  options: { profileDir?: string } = {},
): Promise<BenchResults> {
  const unknown = sections.filter((s) => !(s in SECTIONS));
  if (unknown.length > 0)
    throw new Error(`unknown sections: ${unknown.join(", ")} (known: ${Object.keys(SECTIONS).join(", ")})`);
  const maxFileBytes = String(Math.max(size.largeBytes * 2, 100 * 1024 * 1024));
  // workerd's inspector, so the large rows can say which isolate holds what (bench/isolate-heaps.ts).
  const inspector = await freePort();
  const hooks = [pathToFileURL(path.join(HERE, "workerd-inspector-hook.mjs")).href];
  const env: Record<string, string> = {
    CAPVAULT_MAX_FILE_BYTES: maxFileBytes,
    CAPVAULT_BENCH_WORKERD_INSPECTOR: String(inspector),
  };
  // The launcher's Node process (disk host, Miniflare's side) writes a V8 CPU profile when it exits.
  if (options.profileDir) {
    hooks.push(pathToFileURL(path.join(HERE, "cpu-profile-hook.mjs")).href);
    env.CAPVAULT_BENCH_PROFILE_DIR = options.profileDir;
  }
  env.NODE_OPTIONS = hooks.map((hook) => `--import=${hook}`).join(" ");
  const t0 = performance.now();
  const vault = await startTestVault({ env });
  log(`vault started in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const stops: (() => Promise<void>)[] = [];
  try {
    // A short folder of its own: a unix socket's path must fit in 108 bytes.
    const socketDir = await mkdtemp(path.join(os.tmpdir(), "capvault-floor-"));
    stops.push(() => rm(socketDir, { recursive: true, force: true }));
    // The floor worker's `DISK`: a second disk floor over the same folder, on a unix socket as the disk host is.
    const socketDiskFloor = await startDiskFloor(vault.diskRoot, path.join(socketDir, "disk.sock"));
    stops.push(socketDiskFloor.stop);
    const r2Floor = await startR2Floor(path.join(vault.state, "r2"), vault.state, { diskSocket: socketDiskFloor.url });
    stops.push(r2Floor.stop);
    const diskFloor = await startDiskFloor(vault.diskRoot);
    stops.push(diskFloor.stop);
    const ctx: BenchContext = { size, vault, r2Floor, diskFloor, inspector, log };
    const rows: Row[] = [];
    for (const name of sections) {
      const t0 = performance.now();
      const got = await SECTIONS[name]!(ctx);
      rows.push(...got);
      // Each section's rows as it ends, so a run cut short still shows what it measured.
      log(
        `${name}: ${((performance.now() - t0) / 1000).toFixed(1)} s, ${resent} requests resent so far\n${formatTable(got)}`,
      );
    }
    return {
      date: new Date().toISOString(),
      commit: commit(),
      node: process.version,
      size,
      sections: [...sections],
      rows,
      resent,
    };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await vault.stop();
  }
}
