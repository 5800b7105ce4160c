import { describe, expect, it } from "vitest";
import { largeChunks } from "../../durable-objects/large-chunks.ts";

/** A runtime byte stream (as an upload body is) fed `pieces` pieces of `size` bytes, byte i of all being i % 251. */
function nativeBody(pieces: number, size: number, fail = false): ReadableStream<Uint8Array> {
  const { readable, writable } = new IdentityTransformStream();
  void (async () => {
    const writer = writable.getWriter();
    for (let p = 0; p < pieces; p++) {
      const piece = new Uint8Array(size);
      for (let i = 0; i < size; i++) piece[i] = (p * size + i) % 251;
      await writer.write(piece);
    }
    await (fail ? writer.abort(new Error("client went away")) : writer.close());
  })().catch(() => undefined);
  return readable;
}

async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe("largeChunks: an upload's few-KiB pieces handed on as a few large chunks", () => {
  it("hands on every byte in order, in chunks of at least 64 KiB but the last", async () => {
    const chunks = await collect(largeChunks(nativeBody(300, 4096)));
    const sizes = chunks.map((c) => c.byteLength);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(300 * 4096);
    // Without it the body's 300 pieces of 4 KiB would each cross every stream stage.
    expect(sizes.slice(0, -1).every((n) => n >= 64 * 1024 && n <= 256 * 1024)).toBe(true);
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil((300 * 4096) / (64 * 1024)));
    const all = new Uint8Array(300 * 4096);
    let at = 0;
    for (const c of chunks) {
      all.set(c, at);
      at += c.byteLength;
    }
    expect(all.every((b, i) => b === i % 251)).toBe(true);
  });

  it("ends a body shorter than one chunk, and an empty one", async () => {
    expect((await collect(largeChunks(nativeBody(3, 10)))).map((c) => c.byteLength)).toEqual([30]);
    expect(await collect(largeChunks(nativeBody(0, 0)))).toEqual([]);
  });

  it("with the declared length, sizes its buffers to what is left, and still reads a longer or shorter body whole", async () => {
    // A 1 KiB write holds 1 KiB (and a one-byte probe for the end), not a 256 KiB buffer per write.
    const small = await collect(largeChunks(nativeBody(1, 1024), 1024));
    expect(small.map((c) => [c.byteLength, c.buffer.byteLength])).toEqual([[1024, 1024]]);
    const large = await collect(largeChunks(nativeBody(100, 4096), 100 * 4096));
    expect(large.map((c) => c.byteLength).reduce((a, b) => a + b, 0)).toBe(100 * 4096);
    expect(large.every((c) => c.buffer.byteLength <= 256 * 1024)).toBe(true);
    expect(large.at(-1)!.buffer.byteLength).toBe(large.at(-1)!.byteLength);
    // The length is a hint, never a cut: more bytes than declared, or fewer, all come through for the checks after it.
    const longer = await collect(largeChunks(nativeBody(30, 4096), 1000));
    expect(longer.map((c) => c.byteLength).reduce((a, b) => a + b, 0)).toBe(30 * 4096);
    const all = new Uint8Array(await new Blob(longer).arrayBuffer());
    expect(all.every((b, i) => b === i % 251)).toBe(true);
    expect((await collect(largeChunks(nativeBody(3, 10), 1000))).map((c) => c.byteLength)).toEqual([30]);
    expect(await collect(largeChunks(nativeBody(0, 0), 0))).toEqual([]);
    // A length that is no byte count is ignored, never a zero-sized buffer.
    for (const odd of [0.5, 1000.5, Number.NaN, -10])
      expect((await collect(largeChunks(nativeBody(3, 700), odd))).map((c) => c.byteLength)).toEqual([2100]);
  });

  it("fails when the body fails: a cut body never looks complete", async () => {
    await expect(collect(largeChunks(nativeBody(40, 4096, true)))).rejects.toThrow();
  });

  it("cancelling it cancels the body", async () => {
    const { readable, writable } = new IdentityTransformStream();
    const writer = writable.getWriter();
    void writer.write(new Uint8Array(10)).catch(() => undefined);
    await largeChunks(readable).cancel("revoked");
    await expect(writer.closed).rejects.toThrow();
  });

  it("hands on a stream built in JavaScript whole, as a text tool's body is", async () => {
    const pieces = ["ab", "cd", "e"].map((t) => new TextEncoder().encode(t));
    const js = new ReadableStream<Uint8Array>({
      pull: (c) => {
        const next = pieces.shift();
        if (next) c.enqueue(next);
        else c.close();
      },
    });
    const chunks = await collect(largeChunks(js));
    expect(new TextDecoder().decode(new Uint8Array(await new Blob(chunks).arrayBuffer()))).toBe("abcde");
  });
});
