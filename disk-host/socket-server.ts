import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { dropBody, type HostAnswer, type HostRequest, rawHeader } from "./host-request.ts";

/** A running disk host socket: `close()` stops accepting calls and ends idle connections. */
export interface DiskHostSocket {
  close(): Promise<void>;
  /** Lets the process exit while the socket is open (a test runner's config holds one). */
  unref(): void;
}

/**
 * Serves the disk host's handler (`serve`: its answers before any Response is built) on a Unix socket,
 * which workerd reaches as an `external` service (`address: "unix:<path>"`).
 *
 * Why a Unix socket and not a Miniflare service binding: Node service
 * bindings are served by Miniflare's loopback HTTP server, a TCP port any
 * local user (or a web page posting blind to 127.0.0.1) can reach. A socket
 * in a 0700 folder is reachable only by this user, and every call must still
 * carry the per-start secret the disk host checks.
 *
 * @example
 * const socket = await serveOnUnixSocket((request) => disk.serve(request), "/tmp/capvault-x/disk.sock");
 * new Miniflare({ serviceBindings: { DISK: { external: { address: "unix:/tmp/capvault-x/disk.sock", http: {} } } } });
 */
export function serveOnUnixSocket(
  handler: (request: HostRequest) => Promise<HostAnswer>,
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

/**
 * Bodies of at most this many bytes (by their Content-Length) reach the host
 * whole. Node 20 builds a web stream from a request in about a third of a
 * small call's CPU in the socket (`Readable.toWeb`, profiled: 114 of the 366
 * samples of `answer` over a disk read bench); a call's head is at most
 * 64 KiB (MAX_CALL_BYTES) and a read's whole body is its head.
 */
export const WHOLE_CALL_BYTES = 64 * 1024;

/**
 * How long a small call's body may pause before it goes to the host as a
 * stream after all, so that a body that stalls meets the host's own bounds
 * (an upload's idle and total time) exactly as a streamed one does.
 */
const WHOLE_PAUSE_MS = 100;

/**
 * Exactly `length` bytes of `req` (Node's parser never delivers more than
 * Content-Length), held as they arrive; or, when the body pauses longer than
 * {@link WHOLE_PAUSE_MS}, the bytes so far and the rest as one stream; or null
 * when it ends short, errs or is cut.
 */
function readSmall(req: IncomingMessage, length: number): Promise<HostRequest["body"]> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let at = 0;
    let settled = false;
    const settle = (body: HostRequest["body"]) => {
      if (settled) return;
      settled = true;
      clearTimeout(paused);
      req.off("data", take);
      resolve(body);
    };
    const take = (chunk: Buffer) => {
      at += chunk.length;
      if (at > length) {
        req.destroy();
        return settle(null);
      }
      chunks.push(chunk);
      paused.refresh();
    };
    const asStream = () => {
      if (settled) return;
      req.off("data", take);
      req.pause();
      settle(prepended(Buffer.concat(chunks, at), Readable.toWeb(req) as ReadableStream<Uint8Array>));
    };
    const paused = setTimeout(asStream, WHOLE_PAUSE_MS);
    const ended = () => settle(at === length && req.complete ? Buffer.concat(chunks, length) : null);
    req.on("data", take);
    req.once("end", ended);
    req.once("close", ended);
    req.once("error", () => settle(null));
  });
}

/** `head`, then every chunk of `rest`; cancelling it cancels `rest`. */
function prepended(head: Uint8Array, rest: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = rest.getReader();
  let first: Uint8Array | null = head.length > 0 ? head : null;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (first) {
        controller.enqueue(first);
        first = null;
        return;
      }
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

async function answer(
  handler: (request: HostRequest) => Promise<HostAnswer>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const declared = Number(req.headers["content-length"]);
  // A small call (every read, stat, list; a small write) is read whole: no web stream is built for it,
  // unless its body pauses (readSmall).
  const whole = hasBody && Number.isSafeInteger(declared) && declared >= 0 && declared <= WHOLE_CALL_BYTES;
  let body: HostRequest["body"] = null;
  if (whole) {
    body = await readSmall(req, declared);
    if (!body) return void res.destroy();
  } else if (hasBody) body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
  const request: HostRequest = {
    method: req.method ?? "GET",
    headers: { get: (name) => rawHeader(req.rawHeaders, name) },
    body,
  };
  const answered = await handler(request);
  const { headers, body: answerBody } = answered;
  if (res.destroyed) {
    // workerd hung up while the call ran: release what the answer holds (an open file, for a read).
    if (typeof answerBody !== "string") await dropBody(answerBody);
    return;
  }
  if (typeof answerBody === "string") {
    // Every Result: sent whole, with its length, in one write.
    const bytes = Buffer.from(answerBody);
    res.writeHead(200, { ...headers, "content-length": bytes.length });
    res.end(bytes);
    return;
  }
  const reader = answerBody.getReader();
  try {
    // A small file is one chunk: sent whole, with its length, in one write; longer ones stream with backpressure.
    const first = await reader.read();
    const second = first.done ? first : await reader.read();
    if (second.done) {
      res.writeHead(200, { ...headers, "content-length": first.value?.byteLength ?? 0 });
      res.end(first.value);
      return;
    }
    res.writeHead(200, headers);
    await stream(reader, [first.value!, second.value], res);
  } catch {
    // A body that fails or headers Node refuses: the call is cut, never answered with a host error.
    await reader.cancel().catch(() => undefined);
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
  // workerd may have hung up while the first chunks were read: "close" has fired already, and will not again.
  if (res.destroyed) return cut();
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
    if (res.destroyed) return resolve();
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
