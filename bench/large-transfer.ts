import http from "node:http";

const CHUNK = new Uint8Array(1024 * 1024).fill(7);

/**
 * One request on a connection of its own (`agent: false`). After a large body
 * the server may close the connection as soon as it has answered; a pooled
 * client can pick that dead socket for its next request ("other side
 * closed"). A fresh connection per transfer avoids the race at the cost of
 * one connect, nothing beside hundreds of MiB.
 */
function request(url: string, method: string, headers: Record<string, string>): http.ClientRequest {
  return http.request(url, { method, headers, agent: false });
}

function answer(req: http.ClientRequest, what: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    req.once("error", reject);
    req.once("response", (res) => {
      if (res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300) return resolve(res);
      res.resume();
      reject(new Error(`${what}: HTTP ${res.statusCode}`));
    });
  });
}

/** PUTs `bytes` bytes, 1 MiB at a time, respecting backpressure. */
export async function upload(url: string, bytes: number): Promise<void> {
  const req = request(url, "PUT", { "content-length": String(bytes) });
  const response = answer(req, "large upload");
  for (let sent = 0; sent < bytes; ) {
    const n = Math.min(CHUNK.length, bytes - sent);
    sent += n;
    if (!req.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) {
      await new Promise((resolve) => req.once("drain", resolve));
    }
  }
  req.end();
  const res = await response;
  for await (const _ of res);
}

/** GETs the file and checks that exactly `bytes` bytes came. */
export async function download(url: string, bytes: number): Promise<void> {
  const req = request(url, "GET", {});
  req.end();
  const res = await answer(req, "large download");
  let n = 0;
  for await (const piece of res as AsyncIterable<Buffer>) n += piece.length;
  if (n !== bytes) throw new Error(`large download: ${n} of ${bytes} bytes`);
}
