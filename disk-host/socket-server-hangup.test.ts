import { randomBytes } from "node:crypto";
import { readdirSync, readlinkSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DISK_SECRET_HEADER, type DiskCall, encodeCallHead } from "../storage-adapters/disk-protocol.ts";
import { createDiskHost, type DiskHost } from "./index.ts";
import { serveOnUnixSocket } from "./socket-server.ts";

// Found by a red-team pass (both failed before the fix). 1: a client that hangs
// up after the host answered a read but before the socket wrote its first chunks
// left the read's file open for good (stream() -> drained() waited for a "close"
// that had already fired). 2: a small write read whole was not bounded by the
// upload idle time, unlike the same write streamed.

let dir: string;
let host: DiskHost;
const secret = randomBytes(24).toString("base64url");

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "capvault-hangup-"));
  host = createDiskHost({ baseDir: path.join(dir, "base"), secret, uploads: { idleMs: 300 } });
  await host.cleanStaleTemps();
  await host.fetch(
    new Request("http://capvault-disk/prepareRoot", {
      method: "POST",
      body: encodeCallHead({ op: "prepareRoot", root: ["r/"], create: true }),
      headers: { [DISK_SECRET_HEADER]: secret },
    }),
  );
});

afterAll(async () => {
  await host.close();
  await rm(dir, { recursive: true, force: true });
});

function frame(call: DiskCall, content: Uint8Array = new Uint8Array(0)): Buffer {
  return Buffer.concat([encodeCallHead(call), content]);
}
const httpHead = (length: number) =>
  `POST /call HTTP/1.1\r\nHost: x\r\n${DISK_SECRET_HEADER}: ${secret}\r\ncontent-length: ${length}\r\n\r\n`;

function openOn(name: string): number {
  return readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).endsWith(name);
    } catch {
      return false;
    }
  }).length;
}

describe("the disk host's socket, when the client hangs up", () => {
  it("closes a read's file when the client left while the answer's first chunks were read (a slow disk)", async () => {
    await writeFile(path.join(dir, "base", "r", "slow.bin"), randomBytes(1024 * 1024));
    const sock = path.join(dir, "slow.sock");
    // The host's own answer; only its first two chunk reads are made 20 ms slower, as on a busy disk
    // (every fs call shares libuv's 4 threads with other calls' fsyncs).
    const socket = await serveOnUnixSocket(async (request) => {
      const answer = await host.serve(request);
      if (typeof answer.body === "string") return answer;
      const inner = answer.body.getReader();
      let pulls = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            if (pulls++ < 2) await new Promise((r) => setTimeout(r, 20));
            const { done, value } = await inner.read();
            if (done) controller.close();
            else controller.enqueue(value);
          },
          cancel: (reason) => inner.cancel(reason),
        },
        { highWaterMark: 0 },
      );
      return { headers: answer.headers, body };
    }, sock);
    const read = frame({ op: "read", root: ["r/"], path: ["slow.bin"], range: null, ifNoneMatch: null });
    for (let i = 0; i < 5; i++) {
      await new Promise<void>((resolve) => {
        const c = net.createConnection(sock);
        c.on("close", () => resolve());
        c.on("error", () => undefined);
        // Hang up 10 ms in: after the host answered, before the socket wrote anything.
        c.write(Buffer.concat([Buffer.from(httpHead(read.length)), read]), () => setTimeout(() => c.destroy(), 10));
      });
    }
    // The files close once each call has run its course; a leak never does (the test's timeout bounds the wait).
    for (let i = 0; i < 200 && openOn("slow.bin") > 0; i++) await new Promise((r) => setTimeout(r, 100));
    const leaked = openOn("slow.bin");
    await socket.close();
    expect(leaked, "descriptors still open on the file after 5 hang-ups").toBe(0);
  });

  it("answers a small write whose content stalls as too slow, read whole as streamed", async () => {
    const sock = path.join(dir, "stall.sock");
    const socket = await serveOnUnixSocket((request) => host.serve(request), sock);
    const call: DiskCall = {
      op: "write",
      root: ["r/"],
      path: ["stall.bin"],
      length: 1000,
      contentType: "application/octet-stream",
      ifMatch: null,
      ifNoneMatch: null,
    };
    const body = frame(call, randomBytes(1000));
    const sent = body.subarray(0, body.length - 500);
    const send = (chunked: boolean) =>
      new Promise<string>((resolve) => {
        const c = net.createConnection(sock);
        let out = "";
        c.on("data", (d) => {
          out += d.toString("latin1");
          // The answer is in: the connection itself may stay open (keep-alive).
          if (out.includes("arrived too slowly")) c.destroy();
        });
        c.on("error", () => undefined);
        // The host's idle bound is 300 ms; a body read whole never answered at all. Bounded well inside the test's timeout.
        const timer = setTimeout(() => {
          c.destroy();
          resolve(out || "(no answer after 20 s)");
        }, 20_000);
        c.on("close", () => {
          clearTimeout(timer);
          resolve(out);
        });
        if (chunked) {
          const head = `POST /call HTTP/1.1\r\nHost: x\r\n${DISK_SECRET_HEADER}: ${secret}\r\ntransfer-encoding: chunked\r\n\r\n`;
          c.write(Buffer.concat([Buffer.from(`${head}${sent.length.toString(16)}\r\n`), sent, Buffer.from("\r\n")]));
        } else c.write(Buffer.concat([Buffer.from(httpHead(body.length)), sent]));
      });
    const [streamed, whole] = await Promise.all([send(true), send(false)]);
    await socket.close();
    expect(streamed).toContain("arrived too slowly");
    expect(whole).toContain("arrived too slowly");
  });
});
