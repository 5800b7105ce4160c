/**
 * The entry floor: bare `workerd` (the binary Miniflare runs, no Miniflare
 * around it) serving a constant. What any request served by the runtime costs
 * here, before Miniflare's own entry worker and the vault's code.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";

const WORKERD = createRequire(import.meta.url).resolve("workerd/bin/workerd");

export interface WorkerdFloor {
  url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startWorkerdFloor(): Promise<WorkerdFloor> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "capvault-workerd-floor-"));
  const port = await freePort();
  await writeFile(path.join(dir, "w.js"), 'export default { fetch() { return new Response("ok"); } };\n');
  await writeFile(
    path.join(dir, "config.capnp"),
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = (modules = [(name = "w.js", esModule = embed "w.js")], compatibilityDate = "2025-01-01"))],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
`,
  );
  const child = spawn(WORKERD, ["serve", path.join(dir, "config.capnp")], { stdio: ["ignore", "ignore", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`workerd exited with ${child.exitCode}`);
    const up = await fetch(url).then(
      (r) => r.text().then(() => r.ok),
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error("workerd floor did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
