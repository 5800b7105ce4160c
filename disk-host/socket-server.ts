import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { type HostRequest, rawHeader } from "./host-request.ts";

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
  handler: (request: HostRequest) => Promise<Response>,
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
  handler: (request: HostRequest) => Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const request: HostRequest = {
    method: req.method ?? "GET",
    headers: { get: (name) => rawHeader(req.rawHeaders, name) },
    body: hasBody ? (Readable.toWeb(req) as ReadableStream<Uint8Array>) : null,
  };
  const response = await handler(request);
  if (res.destroyed) {
    // workerd hung up while the call ran: release what the answer holds (an open file, for a read).
    await response.body?.cancel().catch(() => undefined);
    return;
  }
  const reader = response.body?.getReader();
  try {
    // Most answers (every Result, a small file) are one chunk: sent whole, with
    // its length, in one write; longer ones stream with backpressure.
    const first = reader ? await reader.read() : { done: true as const, value: undefined };
    const second = first.done ? first : await reader!.read();
    const head = Object.fromEntries(new Headers(response.headers));
    if (second.done) {
      res.writeHead(response.status, { ...head, "content-length": first.value?.byteLength ?? 0 });
      res.end(first.value);
      return;
    }
    res.writeHead(response.status, head);
    await stream(reader!, [first.value!, second.value], res);
  } catch {
    // A body that fails or headers Node refuses: the call is cut, never answered with a host error.
    await reader?.cancel().catch(() => undefined);
    res.destroy();
  }
}

/** Writes `sent` and then the rest of `reader` to `res`, waiting for drains; a hang-up cancels the body. */
async function stream(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  sent: Uint8Array[],
  res: ServerResponse,
): Promise<void> {
  const cut = () => void reader.cancel().catch(() => undefined);
  res.once("close", cut);
  try {
    for (const chunk of sent) if (!res.write(chunk)) await drained(res);
    for (;;) {
      if (res.destroyed) return cut();
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await drained(res);
    }
    if (!res.destroyed) res.end();
  } finally {
    res.off("close", cut);
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
