import { describe, expect, it } from "vitest";
import { WHOLE_BODY_MAX } from "../../storage-adapters/whole-body.ts";
import { uploadsRunning } from "./slow-upload.ts";
import { call, cap, errorCode, mintRoot } from "./vault.ts";

/**
 * A write whose body fails after its last byte stores nothing, on every
 * surface and both backends. Storage commits a streamed body only once it
 * has ended cleanly (copyChunks holds its last chunk back; expiry-commit
 * checks each backend directly); these check the surfaces on top of it.
 */
let counter = 0;

const sizes: [string, number][] = [
  ["small (read whole)", 100],
  ["large (streamed)", WHOLE_BODY_MAX + 64 * 1024],
];

/** A body the test ends by hand: every one of `length` bytes at once, then open until `end()`. */
function heldOpen(length: number) {
  const { readable, writable } = new IdentityTransformStream();
  const writer = writable.getWriter();
  const sent = (async () => {
    for (let at = 0; at < length; at += 16 * 1024) {
      await writer.write(new Uint8Array(Math.min(16 * 1024, length - at)).fill(0x78));
    }
  })().catch(() => undefined);
  return { body: readable, sent, end: () => writer.close().catch(() => undefined) };
}

/** Every byte of `bytes`, then an error where the end would be. */
function failsAtItsEnd(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= bytes.byteLength) return controller.error(new Error("connection lost"));
      controller.enqueue(bytes.slice(at, at + 16 * 1024));
      at += 16 * 1024;
    },
  });
}

async function fresh(backend: "r2" | "disk") {
  const prefix = `late/${backend}/${++counter}/`;
  return {
    observer: cap((await mintRoot(prefix, { backend })).token),
    writer: cap((await mintRoot(prefix, { backend })).token),
  };
}

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  // The routes that stream a client's body to storage. The cap is revoked once every byte was
  // sent and before the body ends: the cap object's guard then errors the body where its end
  // would be, as it does to a body completing past expiry.
  const streamed: [string, (token: string, length: number, body: ReadableStream) => Promise<Response>][] = [
    [
      "HTTP PUT",
      (token, length, body) =>
        call("PUT", `/object/${token}/file?path=late.bin`, { body, headers: { "content-length": String(length) } }),
    ],
    [
      "WebDAV PUT, chunked with X-Expected-Entity-Length (as Finder sends)",
      (token, length, body) =>
        call("PUT", `/object/${token}/dav/late.bin`, { body, headers: { "x-expected-entity-length": String(length) } }),
    ],
  ];
  for (const [route, send] of streamed) {
    for (const [size, length] of sizes) {
      it(`${route}, ${size}: a body cut after its last byte stores nothing`, async () => {
        const { observer, writer } = await fresh(backend);
        const upload = heldOpen(length);
        const response = send(writer.token, length, upload.body);
        await upload.sent;
        await uploadsRunning(writer.token);
        expect((await writer.revoke()).status).toBe(204);
        await upload.end();
        expect(await errorCode(await response)).toBe("no_such_cap");
        expect(await errorCode(await observer.stat("late.bin"))).toBe("not_found");
      });
    }
    it(`${route}: the same body, ended, is stored`, async () => {
      const { observer, writer } = await fresh(backend);
      const length = sizes[1]![1];
      const upload = heldOpen(length);
      const response = send(writer.token, length, upload.body);
      await upload.sent;
      await upload.end();
      expect((await response).status).toBe(201);
      expect(await (await observer.stat("late.bin")).json()).toMatchObject({ size: length });
    });
  }

  // RPC and MCP carry a write's bytes inside one message, read whole before anything runs:
  // a message whose body fails after its last byte runs nothing.
  const text = "x".repeat(2000);
  const messages: [string, string, Record<string, string>][] = [
    [
      "RPC (an HTTP batch)",
      `${JSON.stringify(["push", ["pipeline", 0, ["write"], ["late.txt", text]]])}\n${JSON.stringify(["pull", 1])}`,
      {},
    ],
    [
      "MCP (write_file)",
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "write_file", arguments: { path: "late.txt", content: text } },
      }),
      { accept: "application/json, text/event-stream", "content-type": "application/json" },
    ],
  ];
  for (const [surface, message, headers] of messages) {
    const route = surface.startsWith("RPC") ? "rpc" : "mcp";
    it(`${surface}: a message failing after its last byte writes nothing; whole, it writes`, async () => {
      const { observer, writer } = await fresh(backend);
      const bytes = new TextEncoder().encode(message);
      const failed = await call("POST", `/object/${writer.token}/${route}`, { body: failsAtItsEnd(bytes), headers });
      await failed.body?.cancel();
      expect(await errorCode(await observer.stat("late.txt"))).toBe("not_found");
      const whole = await call("POST", `/object/${writer.token}/${route}`, { body: bytes, headers });
      expect(whole.status).toBe(200);
      await whole.body?.cancel();
      expect(await (await observer.stat("late.txt")).json()).toMatchObject({ size: text.length });
    });
  }
});
