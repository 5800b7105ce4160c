import { randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import type { Socket } from "node:net";
import { describe, type Observed } from "./http-call.ts";

/**
 * A bare WebSocket client over node:http, for the fuzz: unlike undici's, it
 * shows the handshake's refusal (status, headers, body) when there is no 101,
 * so a refused upgrade is judged like any other answer. Text frames only,
 * masked as RFC 6455 asks of a client; never throws.
 */
export interface SocketSession {
  /** The handshake's answer: 101 with no body, or the refusal as it came. */
  handshake: Observed;
  /** Text messages received so far (fragmented messages joined). */
  messages: string[];
  /** The close code the server sent, once it did. */
  closeCode: number | null;
  /** Resolves when a message arrives, the socket ends, or `ms` pass. */
  next(ms: number): Promise<void>;
  send(text: string): void;
  close(): void;
}

export function openSocket(url: string, headers: Record<string, string>, timeoutMs: number): Promise<SocketSession> {
  return new Promise((resolve) => {
    const messages: string[] = [];
    let closeCode: number | null = null;
    let socket: Socket | null = null;
    let ended = false;
    let wake = () => {};
    const session = (handshake: Observed): SocketSession => ({
      handshake,
      messages,
      get closeCode() {
        return closeCode;
      },
      next: (ms) =>
        ended
          ? Promise.resolve()
          : new Promise<void>((done) => {
              const timer = setTimeout(done, ms);
              wake = () => {
                clearTimeout(timer);
                done();
              };
            }),
      send: (text) => {
        if (socket && !ended) socket.write(frame(0x1, Buffer.from(text, "utf8")));
      },
      close: () => {
        if (socket && !ended) socket.end(frame(0x8, Buffer.from([0x03, 0xe8])));
        socket?.destroy();
        ended = true;
      },
    });
    const failed = (error: string) => resolve(session({ status: 0, headers: [], body: new Uint8Array(), error }));
    const timer = setTimeout(() => {
      request.destroy();
      failed("handshake deadline");
    }, timeoutMs);
    const request = httpRequest(url, {
      agent: false,
      headers: {
        ...headers,
        Connection: "Upgrade",
        Upgrade: "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": randomBytes(16).toString("base64"),
      },
    });
    request.on("response", (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => {
        clearTimeout(timer);
        const heads = Object.entries(response.headers).map(([k, v]): [string, string] => [
          k,
          Array.isArray(v) ? v.join(", ") : (v ?? ""),
        ]);
        resolve(
          session({ status: response.statusCode ?? 0, headers: heads, body: new Uint8Array(Buffer.concat(chunks)) }),
        );
      });
    });
    request.on("upgrade", (response, upgraded, head) => {
      clearTimeout(timer);
      socket = upgraded;
      let pending = Buffer.from(head);
      let fragments: Buffer[] = [];
      const finish = () => {
        ended = true;
        wake();
      };
      upgraded.on("data", (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        for (;;) {
          const parsed = readFrame(pending);
          if (!parsed) break;
          pending = pending.subarray(parsed.used);
          if (parsed.opcode === 0x8) {
            closeCode = parsed.payload.length >= 2 ? parsed.payload.readUInt16BE(0) : 1005;
            upgraded.end();
            finish();
            return;
          }
          if (parsed.opcode === 0x9) upgraded.write(frame(0xa, parsed.payload));
          if (parsed.opcode === 0x1 || parsed.opcode === 0x2 || parsed.opcode === 0x0) {
            fragments.push(parsed.payload);
            if (parsed.fin) {
              messages.push(Buffer.concat(fragments).toString("utf8"));
              fragments = [];
              wake();
            }
          }
        }
      });
      upgraded.on("close", finish);
      upgraded.on("error", finish);
      const heads = Object.entries(response.headers).map(([k, v]): [string, string] => [k, String(v)]);
      resolve(session({ status: response.statusCode ?? 101, headers: heads, body: new Uint8Array() }));
    });
    request.on("error", (error) => {
      clearTimeout(timer);
      failed(describe(error));
    });
    request.end();
  });
}

/** One masked client frame. */
function frame(opcode: number, payload: Buffer): Buffer {
  const mask = randomBytes(4);
  const n = payload.length;
  const head = n < 126 ? Buffer.alloc(2) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  head[0] = 0x80 | opcode;
  if (n < 126) head[1] = 0x80 | n;
  else if (n < 65536) {
    head[1] = 0x80 | 126;
    head.writeUInt16BE(n, 2);
  } else {
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  const body = Buffer.alloc(n);
  for (let i = 0; i < n; i++) body[i] = payload[i]! ^ mask[i & 3]!;
  return Buffer.concat([head, mask, body]);
}

/** One server frame from the front of `data`, or null until it is all there. */
function readFrame(data: Buffer): { fin: boolean; opcode: number; payload: Buffer; used: number } | null {
  if (data.length < 2) return null;
  const fin = (data[0]! & 0x80) !== 0;
  const opcode = data[0]! & 0x0f;
  const masked = (data[1]! & 0x80) !== 0;
  let n = data[1]! & 0x7f;
  let at = 2;
  if (n === 126) {
    if (data.length < 4) return null;
    n = data.readUInt16BE(2);
    at = 4;
  } else if (n === 127) {
    if (data.length < 10) return null;
    n = Number(data.readBigUInt64BE(2));
    at = 10;
  }
  const maskAt = at;
  if (masked) at += 4;
  if (data.length < at + n) return null;
  const payload = Buffer.from(data.subarray(at, at + n));
  if (masked) for (let i = 0; i < n; i++) payload[i] = payload[i]! ^ data[maskAt + (i & 3)]!;
  return { fin, opcode, payload, used: at + n };
}
