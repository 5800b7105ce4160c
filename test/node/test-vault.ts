import { type ChildProcess, spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";

/** tsx as a loader only: its CLI would add a parent process with an IPC socket of its own. */
export const NODE_ARGS = ["--import", pathToFileURL(path.join(PROJECT_ROOT, "node_modules/tsx/dist/loader.mjs")).href];
/** The admin token of test vaults (written to their state folder before start). */
export const TEST_ADMIN_TOKEN = "test-admin-token-0123456789abcdef-0123";

export interface TestVault {
  url: string;
  adminToken: string;
  /** The R2 root cap minted on first start (prefix `default/`). */
  rootCapUrl: string;
  /** The disk root cap for `diskRoot`. */
  diskCapUrl: string;
  state: string;
  diskRoot: string;
  /** The launcher's TMPDIR (inside the vault's own temp folder). */
  tmp: string;
  /** Process group of the launcher (and its workerd). */
  readonly pgid: number;
  /** Everything the launcher printed so far. */
  output(): string;
  /** SIGTERM, wait; then start again on the same state (and a new port). */
  restart(): Promise<void>;
  /** SIGKILL the launcher's whole process group. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export interface TestVaultOptions {
  env?: Record<string, string>;
  args?: string[];
  /** Existing state and disk folders (a state fixture) to copy in and start on, instead of fresh ones. */
  from?: { state: string; diskRoot: string };
}

/**
 * Starts the real launcher (`capvault serve` on Miniflare) in its own process
 * group, on a free port, with fresh state and disk folders under the OS temp
 * dir. `stop()` ends the whole group, so no workerd outlives a test.
 */
export async function startTestVault(options: TestVaultOptions = {}): Promise<TestVault> {
  const base = await mkdtemp(path.join(os.tmpdir(), "capvault-test-"));
  const state = path.join(base, "state");
  const diskRoot = path.join(base, "disk");
  // The launcher's and workerd's own temp folders (the disk socket's, Miniflare's) go here, so they
  // leave with `base` even when a test SIGKILLs the vault, which then cleans up nothing itself.
  const tmp = path.join(base, "tmp");
  await mkdir(tmp, { mode: 0o700 });
  if (options.from) {
    await cp(options.from.state, state, { recursive: true });
    await cp(options.from.diskRoot, diskRoot, { recursive: true });
  }
  let log = "";
  let child: ChildProcess;
  let url = "";
  // One port for the vault's whole life, so cap URLs stay valid across restarts.
  let port = await unusedPort();
  const caps: Record<string, string> = {};
  // The admin token waits in the state folder, as an operator would keep it:
  // never in the launcher's environment or command line.
  const adminToken = options.env?.CAPVAULT_ADMIN_TOKEN ?? TEST_ADMIN_TOKEN;
  if (adminToken) {
    await mkdir(state, { recursive: true, mode: 0o700 });
    await writeFile(path.join(state, "admin-token"), `${adminToken}\n`, { mode: 0o600 });
  }

  const launch = async () => {
    child = spawn(
      process.execPath,
      [...NODE_ARGS, path.join(PROJECT_ROOT, "cli/capvault.ts"), "serve", ...(options.args ?? [])],
      {
        cwd: base,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          PORT: String(port),
          HOST: "127.0.0.1",
          CAPVAULT_STATE: state,
          CAPVAULT_DISK_ROOT: diskRoot,
          CLOUDFLARE_CF_FETCH_ENABLED: "false",
          TMPDIR: tmp,
          // The workers project's config sets one for its own pool; the launcher reads its token from the state folder.
          CAPVAULT_ADMIN_TOKEN: "",
          ...options.env,
        },
      },
    );
    const started = log.length;
    let up = false;
    // A launcher that fails to start must not outlive the test: its whole group goes.
    const killGroup = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    };
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        killGroup();
        reject(new Error(`launcher did not start:\n${log.slice(started)}`));
      }, 60_000);
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        // The caps and the address come before "listening"; after it every request adds a log line, and
        // rescanning the whole log on each one grew quadratic in the client's process, skewing benches.
        if (up) return;
        for (const m of log.slice(started).matchAll(/^(\w+) root cap: (\S+)$/gm)) caps[m[1]!] = m[2]!;
        const ready = /listening on (http:\/\/\S+)/.exec(log.slice(started));
        if (ready) {
          up = true;
          clearTimeout(timer);
          // A vault bound to every interface is reached here over loopback only.
          resolve(ready[1]!.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, "http://127.0.0.1"));
        }
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
      child.once("exit", (code) => {
        clearTimeout(timer);
        killGroup();
        reject(new Error(`launcher exited with ${code}:\n${log.slice(started)}`));
      });
    });
  };

  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      process.kill(-child.pid!, signal);
    } catch {
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {}
    }, 10_000);
    await exited;
    clearTimeout(timer);
    // workerd is in the same group; make sure it is gone too.
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {}
  };

  // Another test may take the port between the probe and the launcher's
  // bind; the launcher then exits at once, and the first start moves on.
  const firstLaunch = async (): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch();
      } catch (error) {
        if (attempt === 5 || !/Address already in use/.test(String(error))) throw error;
        port = await unusedPort();
      }
    }
  };
  await firstLaunch().catch(async (error: unknown) => {
    await rm(base, { recursive: true, force: true });
    throw error;
  });
  return {
    get url() {
      return url;
    },
    adminToken,
    get rootCapUrl() {
      return caps.default!;
    },
    get diskCapUrl() {
      return caps.disk!;
    },
    state,
    diskRoot,
    tmp,
    get pgid() {
      return child.pid!;
    },
    output: () => log,
    restart: async () => {
      await end("SIGTERM");
      await launch();
    },
    kill: () => end("SIGKILL"),
    stop: async () => {
      await end("SIGTERM");
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** A root cap the admin API minted: its URL, token and root id. */
export interface MintedRoot {
  url: string;
  token: string;
  id: string;
}

/** Mints a root over `root.prefix` of `root.backend` through `POST /admin/roots`; throws unless answered 201. */
export async function mintRoot(
  vault: Pick<TestVault, "url" | "adminToken">,
  root: { backend: "r2" | "disk"; prefix: string; label?: string; keepVersions?: number; maxBytes?: number },
): Promise<MintedRoot> {
  const response = await fetch(`${vault.url}/admin/roots`, {
    method: "POST",
    headers: { authorization: `Bearer ${vault.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(root),
  });
  if (response.status !== 201)
    throw new Error(`minting a ${root.backend} root failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as MintedRoot;
}

/**
 * A port that was free a moment ago, chosen below the kernel's ephemeral
 * range (32768-60999 here): a port from `listen(0)` is one the kernel may
 * hand to the next outgoing connection or `listen(0)` of any test as soon as
 * it is released, before the launcher binds it. That race failed CI once.
 */
export async function unusedPort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once("error", () => resolve(false));
      server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}
