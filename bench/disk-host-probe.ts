/**
 * CPU per 1 KiB read and write of the disk host alone: in process (disk.fetch)
 * and over its Unix socket (as workerd calls it). Not wired into any script.
 *   node --import tsx [--cpu-prof] bench/disk-host-probe.ts
 */

import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import os from "node:os";
import path from "node:path";
import { createDiskHost } from "../disk-host/index.ts";
import { serveOnUnixSocket } from "../disk-host/socket-server.ts";
import { DISK_SECRET_HEADER, type DiskCall, encodeCallHead } from "../storage-adapters/disk-protocol.ts";

const N = Number(process.env.PROBE_N ?? 2000);
const SECRET = "0123456789abcdef0123456789abcdef";
const dir = await mkdtemp(path.join(os.tmpdir(), "capvault-dhp-"));
const disk = createDiskHost({ baseDir: path.join(dir, "base"), secret: SECRET });
await disk.cleanStaleTemps();
const sock = path.join(dir, "s.sock");
const server = await serveOnUnixSocket((r) => disk.serve(r), sock);
const content = new Uint8Array(1024).fill(66);

function frame(call: DiskCall, body?: Uint8Array): Uint8Array {
  const head = encodeCallHead(call);
  if (!body) return head;
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}
const readCall: DiskCall = { op: "read", root: [""], path: ["a", "f.bin"], range: null, ifNoneMatch: null };
const writeCall: DiskCall = {
  op: "write",
  root: [""],
  path: ["a", "f.bin"],
  length: 1024,
  contentType: "x/y",
  ifMatch: null,
  ifNoneMatch: null,
};

async function inProcess(bytes: Uint8Array): Promise<void> {
  const res = await disk.fetch(
    new Request("http://d/x", { method: "POST", body: bytes, headers: { [DISK_SECRET_HEADER]: SECRET } }),
  );
  await res.arrayBuffer();
}

const agent = new (await import("node:http")).Agent({ keepAlive: true, maxSockets: 1 });
function overSocket(bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        socketPath: sock,
        method: "POST",
        path: "/x",
        agent,
        headers: { [DISK_SECRET_HEADER]: SECRET, "content-length": bytes.length },
      },
      (res) => {
        res.on("data", () => undefined);
        res.on("end", resolve);
      },
    );
    req.on("error", reject);
    req.end(bytes);
  });
}

async function measure(label: string, fn: () => Promise<void>): Promise<void> {
  for (let i = 0; i < 50; i++) await fn();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await fn();
  const wall = (performance.now() - t0) / N;
  const c = process.cpuUsage(c0);
  console.log(
    `${label.padEnd(22)} cpu ${((c.user + c.system) / 1000 / N).toFixed(3)} ms/op  wall ${wall.toFixed(3)} ms/op`,
  );
}

await inProcess(frame(writeCall, content));
await measure("read in process", () => inProcess(frame(readCall)));
await measure("write in process", () => inProcess(frame(writeCall, content)));
await measure("read over socket", () => overSocket(frame(readCall)));
await measure("write over socket", () => overSocket(frame(writeCall, content)));
agent.destroy();
await server.close();
await disk.close();
await rm(dir, { recursive: true, force: true });
