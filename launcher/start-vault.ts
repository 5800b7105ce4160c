import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { Miniflare, type WorkerOptions } from "miniflare";
import { createDiskHost } from "../disk-host/index.ts";
import { serveOnUnixSocket } from "../disk-host/socket-server.ts";
import { loadAdminToken } from "./admin-token.ts";
import { buildWorker, PROJECT_ROOT } from "./build-worker.ts";
import { format0Cutoff } from "./format0-cutoff.ts";
import { assertPortFree, isAddressInUse, PortInUseError } from "./port-in-use.ts";
import { type RuntimeConfig, readRuntimeConfig } from "./runtime-config.ts";
import { assertEntrySealed, withSealedEntry } from "./sealed-entry.ts";
import { assertSealed, withSealedLoopback } from "./sealed-loopback.ts";
import type { Settings } from "./settings.ts";
import { loadVaultKey } from "./vault-key.ts";

export interface RunningVault {
  /** The address the vault binds, e.g. `http://127.0.0.1:8787` or `http://0.0.0.0:8787`. */
  url: string;
  adminToken: string;
  adminTokenFresh: boolean;
  /** Root caps minted at this start: on new state, and a disk root once CAPVAULT_DISK_ROOT is first given. */
  firstRun: { label: string; url: string }[];
  /** Live root caps, these included. */
  rootCount: number;
  /** Said once on stderr: what this start did not do as asked, and why. */
  notes: string[];
  stop(): Promise<void>;
}

const MARKER = "vault.json";
/** The R2 bucket's id: its binding's name, and where Miniflare keeps its data under the state folder. */
const BUCKET_ID = "BUCKET";

/** The vault's worker as Miniflare runs it: its bundle, runtime, objects and bucket (the launcher's, and the binding tests'). */
export function vaultWorker(scriptPath: string, runtime: RuntimeConfig) {
  return {
    modules: true,
    scriptPath,
    modulesRoot: path.dirname(scriptPath),
    compatibilityDate: runtime.compatibilityDate,
    compatibilityFlags: runtime.compatibilityFlags,
    durableObjects: {
      CAPS: { className: "CapObject", useSQLite: true },
      ROOTS: { className: "RootRegistry", useSQLite: true },
      JOURNALS: { className: "RootJournal", useSQLite: true },
      OAUTH: { className: "OAuthRegistry", useSQLite: true },
    },
    r2Buckets: [BUCKET_ID],
  } satisfies WorkerOptions;
}

/**
 * Runs the worker on Miniflare with persistent state: Durable Objects and the
 * local R2 bucket live under `settings.state`; the disk backend is the Node
 * disk host, which workerd reaches over a private Unix socket.
 *
 * The public port is the only socket that serves anything: Miniflare's own
 * loopback server is sealed (launcher/sealed-loopback.ts), the disk socket
 * sits in a 0700 folder and demands a per-start secret, and secrets reach
 * workerd inside its config (on stdin), never in its environment or
 * command line.
 */
export async function startVault(settings: Settings): Promise<RunningVault> {
  // Before anything is generated or spawned: a taken port then costs nothing and leaves nothing.
  await assertPortFree(settings.host, settings.port);
  await mkdir(settings.state, { recursive: true, mode: 0o700 });
  // The state folder holds every cap's record and the admin token: owner only.
  await chmod(settings.state, 0o700);
  await mkdir(settings.diskRoot, { recursive: true, mode: 0o700 });
  const { token: adminToken, fresh } = await loadAdminToken(
    settings.state,
    settings.adminToken,
    settings.adminTokenFile,
  );
  const scriptPath = await buildWorker(path.join(settings.state, "build"));
  const runtime = readRuntimeConfig(path.join(PROJECT_ROOT, "wrangler.toml"));

  // Shared by the worker and the disk host only, new at every start.
  const diskSecret = randomBytes(32).toString("base64url");
  const disk = createDiskHost({ baseDir: settings.diskRoot, secret: diskSecret });
  // Temp files of writes cut short by a crash are never visible through the
  // API, but they are removed here so they do not pile up.
  await disk.cleanStaleTemps();
  // mkdtemp makes the folder 0700; a short path keeps within the 108-byte socket name limit.
  const runDir = await mkdtemp(path.join(os.tmpdir(), "capvault-"));
  // Miniflare's own SIGINT/SIGTERM hook ends the process (process.exit) before
  // `stop` below can run, which left this folder behind at every signalled stop.
  const removeRunDir = () => rmSync(runDir, { recursive: true, force: true });
  process.once("exit", removeRunDir);
  const socketPath = path.join(runDir, "disk.sock");
  const diskSocket = await serveOnUnixSocket((request) => disk.serve(request), socketPath);

  // Before the key is loaded: a format-0 folder is told apart by having none yet.
  const format0Until = await format0Cutoff(settings.state);
  const bindings: Record<string, string> = {
    CAPVAULT_ADMIN_TOKEN: adminToken,
    CAPVAULT_DISK_SECRET: diskSecret,
    CAPVAULT_TOKEN_KEY: await loadVaultKey(settings.state),
  };
  if (format0Until !== null) bindings.CAPVAULT_FORMAT0_UNTIL = String(format0Until);
  if (settings.maxFileBytes !== null) bindings.CAPVAULT_MAX_FILE_BYTES = String(settings.maxFileBytes);
  bindings.CAPVAULT_PUBLIC_URL = settings.publicUrl;

  // Held outside the start callback: a Miniflare that fails while starting
  // (its port taken, workerd gone) still has servers and a child to end.
  let mf: Miniflare | undefined;
  const stop = async () => {
    await mf?.dispose().catch(() => undefined);
    await diskSocket.close();
    await disk.close();
    await rm(runDir, { recursive: true, force: true });
    process.off("exit", removeRunDir);
  };
  try {
    const { sealed } = await withSealedLoopback(async () =>
      withSealedEntry(async () => {
        mf = new Miniflare({
          host: settings.host,
          port: settings.port,
          ...vaultWorker(scriptPath, runtime),
          durableObjectsPersist: path.join(settings.state, "durable-objects"),
          r2Persist: path.join(settings.state, "r2"),
          bindings,
          handleRuntimeStdio: passRuntimeOutput,
          serviceBindings: { DISK: { external: { address: `unix:${socketPath}`, http: {} } } },
        });
        return mf.ready;
      }),
    );
    await assertSealed(sealed);
    const running = mf!;
    await assertEntrySealed((await running.ready).origin, BUCKET_ID);
    // Miniflare's ready URL names a loopback address even when the socket binds every interface.
    const url = boundUrl(settings.host, Number((await running.ready).port));
    const { minted, rootCount, notes } = await mintRoots(running, settings, adminToken);
    return { url, adminToken, adminTokenFresh: fresh, firstRun: minted, rootCount, notes, stop };
  } catch (error) {
    // Without this, a failed start left the disk socket and Miniflare's
    // servers open and `capvault serve` alive after printing its error.
    await stop();
    // Taken between the probe above and workerd's bind.
    throw isAddressInUse(error) ? new PortInUseError(settings.host, settings.port) : error;
  }
}

/**
 * workerd's output, line by line, as Miniflare passes it by default, less
 * the stack dump of a port it could not bind: that failure is said in one
 * line by the launcher.
 */
function passRuntimeOutput(stdout: Readable, stderr: Readable): void {
  createInterface(stdout).on("line", (line) => console.log(line));
  let droppingStack = false;
  createInterface(stderr).on("line", (line) => {
    if (/^\*\*\* Fatal uncaught kj::Exception: .*Address already in use/.test(line)) {
      droppingStack = true;
      return;
    }
    const stack = droppingStack && line.startsWith("stack: ");
    droppingStack = false;
    if (!stack) console.error(line);
  });
}

interface VaultMarker {
  createdAt: string;
  /** The disk folder last given (CAPVAULT_DISK_ROOT), when one was. */
  diskRoot?: string;
}

/**
 * On new state: a root cap for R2 prefix `default/`, and one for the disk
 * folder when it was named. On later starts: a disk root cap the first time
 * the folder is named (none existed), and a note when it names another
 * folder than last time (every disk cap then serves the new one).
 */
async function mintRoots(
  mf: Miniflare,
  settings: Settings,
  adminToken: string,
): Promise<{ minted: { label: string; url: string }[]; rootCount: number; notes: string[] }> {
  const minted: { label: string; url: string }[] = [];
  const notes: string[] = [];
  const admin = (method: string, body?: unknown, query = "") =>
    mf.dispatchFetch(`${settings.publicUrl}/admin/roots${query}`, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const mint = async (backend: string, prefix: string, label: string) => {
    const res = await admin("POST", { backend, prefix, label });
    if (res.status !== 201) throw new Error(`could not mint the ${label} root cap (HTTP ${res.status})`);
    minted.push({ label, url: ((await res.json()) as { url: string }).url });
  };
  const markerFile = path.join(settings.state, MARKER);
  const marker = await readMarker(markerFile);
  const roots = marker === null ? [] : await liveRoots(admin);
  if (marker === null) {
    await mint("r2", "default/", "default");
    if (settings.diskRootGiven) await mint("disk", "", "disk");
  } else if (settings.diskRootGiven) {
    if (!roots.some((r) => r.backend === "disk")) await mint("disk", "", "disk");
    else if (marker.diskRoot !== undefined && marker.diskRoot !== settings.diskRoot)
      notes.push(
        `CAPVAULT_DISK_ROOT is now ${settings.diskRoot} (was ${marker.diskRoot}): every disk cap serves the new folder`,
      );
  }
  if (marker === null || (settings.diskRootGiven && marker.diskRoot !== settings.diskRoot)) {
    const next: VaultMarker = {
      createdAt: marker?.createdAt ?? new Date().toISOString(),
      ...(settings.diskRootGiven ? { diskRoot: settings.diskRoot } : {}),
    };
    await writeFile(markerFile, JSON.stringify(next) + "\n", { mode: 0o600 });
  }
  return { minted, rootCount: roots.length + minted.length, notes };
}

async function liveRoots(
  admin: (method: string, body?: unknown, query?: string) => Promise<{ status: number; json(): Promise<unknown> }>,
) {
  const roots: { backend: string }[] = [];
  let cursor: string | null = null;
  do {
    const res = await admin("GET", undefined, cursor ? `?cursor=${encodeURIComponent(cursor)}` : "");
    if (res.status !== 200) throw new Error(`could not list the root caps (HTTP ${res.status})`);
    const page = (await res.json()) as { roots: { backend: string }[]; cursor: string | null };
    roots.push(...page.roots);
    cursor = page.cursor === cursor ? null : page.cursor;
  } while (cursor);
  return roots;
}

async function readMarker(file: string): Promise<VaultMarker | null> {
  const text = await readFile(file, "utf8").catch(() => null);
  if (text === null) return null;
  try {
    return JSON.parse(text) as VaultMarker;
  } catch {
    return { createdAt: "" };
  }
}

/** Whether `host` binds every interface, so the vault is reachable from the network. */
export function isWildcardHost(host: string): boolean {
  return host === "0.0.0.0" || host === "::" || host === "*";
}

function boundUrl(host: string, port: number): string {
  const shown = host === "*" ? "0.0.0.0" : host;
  return `http://${shown.includes(":") ? `[${shown}]` : shown}:${port}`;
}
