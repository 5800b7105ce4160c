/**
 * The disk floor: a plain `node:http` server over one folder, doing
 * `fs.readFile` / `fs.writeFile` and nothing else. No token, no path rules,
 * no atomic rename or fsync, no sidecar: what serving a file from Node costs
 * at the least. `PUT ...&durable=1` is the durable-write floor: the promise
 * the vault's disk writes make (a reader sees the old file or the new one
 * whole, and a 2xx survives a crash): temp file, fsync, rename, fsync of the
 * folder. `&commits=1` adds what the vault's write also makes durable: a
 * line appended to a journal file and one to an audit file (beside the folder, not in it), each with
 * `fdatasync` (a SQLite WAL commit is an append and a sync), one after the
 * other as the vault's journal and audit commits are. Bench only, loopback only.
 *
 * Run as its own process (`node --import tsx bench/floor-disk-server.ts DIR [SOCKET]`),
 * as the vault's disk host runs in the launcher's, so neither shares the
 * bench client's event loop. Prints `listening <port>` when ready, or with
 * SOCKET listens on that unix socket instead (as the disk host does, for the
 * floor worker's `?disk=` routes) and prints `listening SOCKET`.
 */
import { createReadStream } from "node:fs";
import { mkdir, open, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

/** Above this a file is streamed, as the vault does, rather than held whole. */
const STREAM_FROM = 1024 * 1024;

export function createFloorServer(root: string): http.Server {
  return http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://floor");
      const file = path.join(root, url.searchParams.get("path") ?? "");
      if (url.pathname === "/list") {
        const names = await readdir(file);
        res.setHeader("content-type", "application/json");
        return res.end(JSON.stringify({ entries: names.length }));
      }
      if (req.method === "PUT") {
        await mkdir(path.dirname(file), { recursive: true });
        if (url.searchParams.has("durable")) await writeDurably(file, req);
        else await writeFile(file, req);
        if (url.searchParams.has("commits"))
          for (const log of ["journal", "audit"])
            await commitLine(path.join(path.dirname(root), `.floor-${log}.log`), file);
        res.statusCode = 201;
        return res.end();
      }
      const info = await stat(file);
      res.setHeader("content-length", info.size);
      if (req.method === "HEAD") return res.end();
      if (info.size >= STREAM_FROM) return createReadStream(file).pipe(res);
      res.end(await readFile(file));
    } catch {
      res.statusCode = 404;
      res.end();
    }
  });
}

let temps = 0;

async function commitLine(log: string, file: string): Promise<void> {
  const handle = await open(log, "a");
  try {
    await handle.write(`write ${file}\n`);
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

async function writeDurably(file: string, body: http.IncomingMessage): Promise<void> {
  const temp = path.join(path.dirname(file), `.floor-${process.pid}-${temps++}`);
  const handle = await open(temp, "wx");
  try {
    for await (const chunk of body) await handle.write(chunk as Buffer);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temp, file);
  const dir = await open(path.dirname(file), "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = createFloorServer(process.argv[2]!);
  server.keepAliveTimeout = 60_000;
  const socket = process.argv[3];
  if (socket) server.listen(socket, () => process.stdout.write(`listening ${socket}\n`));
  else
    server.listen(0, "127.0.0.1", () => {
      process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
    });
}
