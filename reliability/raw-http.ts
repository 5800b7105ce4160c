import { connect } from "node:net";
import type { Observed } from "./http-call.ts";

/**
 * Sends bytes over a fresh TCP connection and reads one response. `fetch`
 * refuses to lie about Content-Length; this does not, so the vault's own
 * HTTP parsing meets bodies shorter or longer than declared. After `request`
 * the write side is closed, so a server waiting for promised bytes sees EOF.
 */
export function rawCall(port: number, request: Uint8Array, timeoutMs = 10_000): Promise<Observed> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect({ host: "127.0.0.1", port });
    let settled = false;
    const finish = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseResponse(Buffer.concat(chunks), error));
    };
    const timer = setTimeout(() => finish("deadline"), timeoutMs);
    socket.on("connect", () => socket.end(request));
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", (error) => finish(error.message));
    socket.on("close", () => finish());
  });
}

/** The first response in `bytes` (status, headers, body as sent: chunked bodies are left encoded). */
function parseResponse(bytes: Buffer, error?: string): Observed {
  const end = bytes.indexOf("\r\n\r\n");
  if (end < 0)
    return {
      status: 0,
      headers: [],
      body: new Uint8Array(),
      error: error ?? (bytes.length ? "incomplete head" : "no response"),
    };
  const [statusLine = "", ...lines] = bytes.subarray(0, end).toString("latin1").split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0);
  const headers = lines.map((line): [string, string] => {
    const colon = line.indexOf(":");
    return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()];
  });
  return { status, headers, body: new Uint8Array(bytes.subarray(end + 4)), ...(error ? { error } : {}) };
}
