/**
 * The disk floor: a plain `node:http` server over one folder, doing
 * `fs.readFile` / `fs.writeFile` and nothing else. No token, no path rules,
 * no atomic rename or fsync, no sidecar: what serving a file from Node costs
 * at the least. Bench only, loopback only.
 *
 * Run as its own process (`node --import tsx bench/floor-disk-server.ts DIR`),
 * as the vault's disk host runs in the launcher's, so neither shares the
 * bench client's event loop. Prints `listening <port>` when ready.
 */
import { createReadStream } from "node:fs";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
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
        await writeFile(file, req);
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

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = createFloorServer(process.argv[2]!);
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => {
    process.stdout.write(`listening ${(server.address() as { port: number }).port}\n`);
  });
}
