import http from "node:http";
import type { Socket } from "node:net";

/**
 * Starts Miniflare with its "loopback" server sealed.
 *
 * Miniflare always runs an unauthenticated HTTP server for workerd to call
 * back into Node. Its internal routes read and write host files:
 * `POST /core/error` renders source files named in a caller-supplied stack
 * (it returned `/proc/self/environ`), `POST /core/store-temp-file` writes a
 * file at a caller-influenced path. Any local user can reach it (its port is
 * in workerd's command line), a web page can post to it blind, and it binds
 * to whatever host Miniflare is given, `0.0.0.0` included. See
 * docs/security.md.
 *
 * capvault needs nothing from it: the disk host has its own socket
 * (disk-host/socket-server.ts), logs go through workerd's stdout, and the
 * worker never throws to Miniflare's error pages. So every server Miniflare
 * creates while starting is made to listen on 127.0.0.1 only and to reset
 * every connection before a byte is parsed. {@link assertSealed} then proves
 * it on the live port, so a Miniflare upgrade that creates its server some
 * other way stops the launcher instead of leaving the door open.
 *
 * @example
 * const { value: mf, sealed } = await withSealedLoopback(async () => {
 *   const mf = new Miniflare(options);
 *   await mf.ready;
 *   return mf;
 * });
 * await assertSealed(sealed);
 */
export async function withSealedLoopback<T>(start: () => Promise<T>): Promise<{ value: T; sealed: http.Server[] }> {
  const original = http.createServer;
  const sealed: http.Server[] = [];
  const wrapped = (...args: unknown[]) => {
    const server = (original as (...a: unknown[]) => http.Server).apply(http, args);
    seal(server);
    sealed.push(server);
    return server;
  };
  http.createServer = wrapped as typeof http.createServer;
  try {
    return { value: await start(), sealed };
  } finally {
    http.createServer = original;
  }
}

function seal(server: http.Server): void {
  // The HTTP parser is attached by the server's own "connection" listener;
  // without it no request is ever read.
  server.removeAllListeners("connection");
  server.on("connection", (socket: Socket) => socket.destroy());
  const listen = server.listen.bind(server) as (...args: unknown[]) => http.Server;
  server.listen = ((port: unknown, _host: unknown, ...rest: unknown[]) =>
    listen(port, "127.0.0.1", ...rest)) as typeof server.listen;
}

/**
 * Fails unless Miniflare created exactly one server, it listens on loopback
 * only, and it resets a fresh connection instead of answering it.
 */
export async function assertSealed(sealed: http.Server[]): Promise<void> {
  if (sealed.length !== 1) throw new Error(`expected Miniflare to create one loopback server, saw ${sealed.length}`);
  const address = sealed[0]!.address();
  if (address === null || typeof address === "string" || address.address !== "127.0.0.1") {
    throw new Error("Miniflare's loopback server is not on 127.0.0.1 only");
  }
  const answered = await fetch(`http://127.0.0.1:${address.port}/core/public-url`).then(
    () => true,
    () => false,
  );
  if (answered) throw new Error("Miniflare's loopback server answered a request; refusing to run unsealed");
}
