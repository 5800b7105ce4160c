import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";

/** A running disk host socket: `close()` stops accepting calls and ends idle connections. */
export interface DiskHostSocket {
  close(): Promise<void>;
  /** Lets the process exit while the socket is open (a test runner's config holds one). */
  unref(): void;
}

/**
 * Serves a fetch-style handler (the disk host's `fetch`) on a Unix socket,
 * which workerd reaches as an `external` service (`address: "unix:<path>"`).
 *
 * Why a Unix socket and not a Miniflare service binding: Node service
 * bindings are served by Miniflare's loopback HTTP server, a TCP port any
 * local user (or a web page posting blind to 127.0.0.1) can reach. A socket
 * in a 0700 folder is reachable only by this user, and every call must still
 * carry the per-start secret the disk host checks.
 *
 * @example
 * const socket = await serveOnUnixSocket((request) => disk.fetch(request), "/tmp/capvault-x/disk.sock");
 * new Miniflare({ serviceBindings: { DISK: { external: { address: "unix:/tmp/capvault-x/disk.sock", http: {} } } } });
 */
export function serveOnUnixSocket(
  handler: (request: Request) => Promise<Response>,
  socketPath: string,
): Promise<DiskHostSocket> {
  const server = createServer((req, res) => {
    // The handler never throws by contract; a broken call is cut, never answered with a host error.
    answer(handler, req, res).catch(() => res.destroy());
  });
  // Uploads are bounded by the disk host's own idle and total timeouts; Node's
  // default 300 s request timeout would cut a large, healthy one. workerd
  // pools connections, so idle ones are kept rather than closed under it.
  server.requestTimeout = 0;
  server.keepAliveTimeout = 10 * 60_000;
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      // An accept failure (out of descriptors, say) must not crash the launcher; the error names no path.
      server.on("error", (error: NodeJS.ErrnoException) => console.error(`disk host socket: ${error.code ?? "error"}`));
      resolve({
        unref: () => void server.unref(),
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeIdleConnections();
          }),
      });
    });
  });
}

async function answer(
  handler: (request: Request) => Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const headers = new Headers();
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const request = new Request(`http://disk${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
    duplex: "half",
  } as RequestInit);
  const response = await handler(request);
  if (res.destroyed) {
    // workerd hung up while the call ran: release what the answer holds (an open file, for a read).
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  try {
    res.writeHead(response.status, Object.fromEntries(new Headers(response.headers)));
  } catch {
    await response.body?.cancel().catch(() => undefined);
    res.destroy();
    return;
  }
  if (!response.body) {
    res.end();
    return;
  }
  // pipeline ends both sides on any failure, including a destination already closed.
  await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), res).catch(() => undefined);
}
