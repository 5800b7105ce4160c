import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DISK_SECRET_HEADER, type DiskCall, encodeCallHead } from "../storage-adapters/disk-protocol.ts";
import { createDiskHost, type DiskHost } from "./index.ts";
import { type DiskHostSocket, serveOnUnixSocket, WHOLE_CALL_BYTES } from "./socket-server.ts";

// The socket reads a small call whole (no web stream) and streams a large one:
// both must answer exactly as the host answers the same call as a fetch Request.

let dir: string;
let host: DiskHost;
let socket: DiskHostSocket;
const secret = randomBytes(24).toString("base64url");
const socketPath = () => path.join(dir, "disk.sock");

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "capvault-socket-"));
  host = createDiskHost({ baseDir: path.join(dir, "base"), secret });
  socket = await serveOnUnixSocket((request) => host.serve(request), socketPath());
  await host.fetch(call({ op: "prepareRoot", root: ["r/"], create: true }));
});

afterAll(async () => {
  await socket.close();
  await host.close();
  await rm(dir, { recursive: true, force: true });
});

function call(value: DiskCall, content: Uint8Array = new Uint8Array(0), headers: Record<string, string> = {}) {
  const head = encodeCallHead(value);
  const body = new Uint8Array(head.length + content.length);
  body.set(head);
  body.set(content, head.length);
  return new Request(`http://capvault-disk/${value.op}`, {
    method: "POST",
    body,
    headers: { [DISK_SECRET_HEADER]: secret, ...headers },
  });
}

/** One raw call over the socket; `cut` sends half the body and hangs up. */
function overSocket(
  body: Uint8Array,
  options: { secret?: string; length?: number; chunked?: boolean; cut?: boolean } = {},
): Promise<{ status: number; text: string } | "cut"> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { [DISK_SECRET_HEADER]: options.secret ?? secret };
    if (!options.chunked) headers["content-length"] = options.length ?? body.length;
    const req = http.request({ socketPath: socketPath(), method: "POST", path: "/call", headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      res.on("error", () => resolve("cut"));
    });
    req.on("error", () => resolve("cut"));
    if (options.cut) {
      req.on("close", () => resolve("cut"));
      req.write(body.subarray(0, Math.floor(body.length / 2)), () => req.destroy());
      return;
    }
    req.end(body);
  });
}

async function bodyOf(request: Request): Promise<Uint8Array> {
  return new Uint8Array(await request.arrayBuffer());
}

describe("the disk host's socket", () => {
  it("answers a small call read whole as the host answers it streamed, and a bad frame alike", async () => {
    await writeFile(path.join(dir, "base", "r", "a.txt"), "hello");
    const statCall = () => call({ op: "stat", root: ["r/"], path: ["a.txt"] });
    const statBytes = await bodyOf(statCall());
    const direct = await (await host.fetch(statCall())).text();
    const whole = await overSocket(statBytes);
    expect(whole).toEqual({ status: 200, text: direct });
    expect(JSON.parse(direct)).toMatchObject({ ok: true, value: { type: "file", size: 5 } });
    const read = await overSocket(
      await bodyOf(call({ op: "read", root: ["r/"], path: ["a.txt"], range: null, ifNoneMatch: null })),
    );
    expect(read).toMatchObject({ status: 200, text: "hello" });
    // The same bytes sent chunked (no length: the streamed path) answer the same.
    expect(await overSocket(statBytes, { chunked: true })).toEqual({ status: 200, text: direct });

    // Malformed frames: empty, a head claiming more than was sent, a head past the bound.
    for (const bad of [new Uint8Array(0), new Uint8Array([0, 0, 0, 9, 123]), new Uint8Array([0, 1, 0, 1, 1, 1])]) {
      for (const chunked of [false, true]) {
        const answer = await overSocket(bad, { chunked });
        expect(answer !== "cut" && answer.status, "a malformed frame").toBe(200);
        expect(answer !== "cut" && JSON.parse(answer.text).error.code).toBe("bad_request");
      }
    }
    // The wrong secret is refused as the host refuses it, whole or streamed.
    const refused = await overSocket(statBytes, { secret: "x".repeat(32) });
    expect(refused !== "cut" && JSON.parse(refused.text)).toMatchObject({ ok: false, error: { code: "unavailable" } });
  });

  it("stores a write exactly whether it arrives whole or streamed, and a body cut short stores nothing", async () => {
    const small = new TextEncoder().encode("small write");
    const large = randomBytes(WHOLE_CALL_BYTES + 1000);
    const write = (name: string, content: Uint8Array) =>
      call(
        {
          op: "write",
          root: ["r/"],
          path: [name],
          length: content.length,
          contentType: "application/octet-stream",
          ifMatch: null,
          ifNoneMatch: null,
        },
        content,
      );
    for (const [name, content] of [
      ["small.bin", small],
      ["large.bin", large],
    ] as const) {
      const answer = await overSocket(await bodyOf(write(name, content)));
      expect(answer !== "cut" && JSON.parse(answer.text)).toMatchObject({ ok: true, value: { size: content.length } });
      expect(new Uint8Array(await readFile(path.join(dir, "base", "r", name)))).toEqual(new Uint8Array(content));
    }
    // Cut halfway, whole-sized and streamed-sized: no answer, no file.
    for (const [name, content] of [
      ["cut-small.bin", small],
      ["cut-large.bin", large],
    ] as const) {
      expect(await overSocket(await bodyOf(write(name, content)), { cut: true })).toBe("cut");
      const stat = await host.fetch(call({ op: "stat", root: ["r/"], path: [name] }));
      expect(await stat.json()).toMatchObject({ ok: false, error: { code: "not_found" } });
    }
  });
});
