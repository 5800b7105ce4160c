import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TSX_LOADER = pathToFileURL(path.join(HERE, "../node_modules/tsx/dist/loader.mjs")).href;

export interface DiskFloor {
  /** The loopback origin, or (over a unix socket) the socket's path. */
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts bench/floor-disk-server.ts over `root` in a process of its own, on
 * a loopback port or, with `socket`, on that unix socket (for the floor worker's `DISK`).
 */
export async function startDiskFloor(root: string, socket?: string): Promise<DiskFloor> {
  const args = ["--import", TSX_LOADER, path.join(HERE, "floor-disk-server.ts"), root, ...(socket ? [socket] : [])];
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
  const where = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (.+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`disk floor exited with ${code}`)));
  });
  return {
    url: socket ? where : `http://127.0.0.1:${where}`,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
