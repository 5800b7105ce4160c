import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TSX_LOADER = pathToFileURL(path.join(HERE, "../node_modules/tsx/dist/loader.mjs")).href;

export interface DiskFloor {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts bench/floor-disk-server.ts over `root` in a process of its own. */
export async function startDiskFloor(root: string): Promise<DiskFloor> {
  const child = spawn(process.execPath, ["--import", TSX_LOADER, path.join(HERE, "floor-disk-server.ts"), root], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`disk floor exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
