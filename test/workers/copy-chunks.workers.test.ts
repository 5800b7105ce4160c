import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { nativeChunks, recycleChunk } from "../../shared/native-chunks.ts";
import { yieldTurn } from "../../shared/yield-turn.ts";
import { copyChunks } from "../../storage-adapters/copy-chunks.ts";

/**
 * An upload's bytes cross the cap object in buffers that nativeChunks fills
 * and copyChunks hands back once every sink has taken them, so a 256 MiB
 * upload reuses a few buffers instead of leaving a thousand to the
 * collector. What must hold: no sink ever sees a later chunk's bytes in
 * place of an earlier one's, errors travel as through a pipe, and a buffer
 * is only refilled by the stream it came from.
 */

/** A runtime byte stream (as an upload body is) of `pieces` pieces of `size` bytes, byte i of all being `byteAt(i)`. */
function nativeBody(pieces: number, size: number, end: "close" | "fail" = "close"): ReadableStream<Uint8Array> {
  const { readable, writable } = new IdentityTransformStream();
  void (async () => {
    const writer = writable.getWriter();
    for (let p = 0; p < pieces; p++) {
      const piece = new Uint8Array(size);
      for (let i = 0; i < size; i++) piece[i] = byteAt(p * size + i);
      await writer.write(piece);
    }
    await (end === "fail" ? writer.abort(new Error("client went away")) : writer.close());
  })().catch(() => undefined);
  return readable;
}

/** Differs between any two chunks of a run, so a refilled buffer read too early shows. */
function byteAt(i: number): number {
  return (i * 7 + (i >> 16) * 13) % 251;
}

async function sha256(bytes: Uint8Array): Promise<string> {
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("");
}

const CHUNK = 64 * 1024;
let counter = 0;

describe("copyChunks over nativeChunks: an upload's bytes through a few reused buffers", () => {
  it("stores every byte in order and hashes the same bytes, refilling the buffers it handed back", async () => {
    // Paced as the R2 copy is (a turn before each read): a buffer handed back before its write
    // resolved would then be refilled while the bucket still reads it, and the stored bytes would show it.
    const length = 40 * CHUNK;
    const key = `copy-chunks/${++counter}`;
    const fixed = new FixedLengthStream(length);
    const digest = new crypto.DigestStream("SHA-256");
    const seen: Uint8Array[] = [];
    // A sink that takes its time and reads the chunk only as its write ends, as the streams spec lets it.
    const late: Uint8Array[] = [];
    const slow = new WritableStream<Uint8Array>({
      async write(chunk) {
        await scheduler.wait(1);
        late.push(chunk.slice());
      },
    });
    const putting = env.BUCKET.put(key, fixed.readable);
    const copied = await copyChunks(
      nativeChunks(nativeBody(160, 16 * 1024), { min: CHUNK, max: CHUNK }, yieldTurn),
      [digest, fixed.writable, slow],
      { onChunk: (chunk) => void seen.push(chunk) },
    );
    await putting;
    expect(copied).toBe(true);
    const stored = new Uint8Array(await (await env.BUCKET.get(key))!.arrayBuffer());
    const expected = Uint8Array.from({ length }, (_, i) => byteAt(i));
    expect(stored.byteLength).toBe(length);
    expect(stored.every((byte, i) => byte === expected[i])).toBe(true);
    const lateBytes = new Uint8Array(await new Blob(late).arrayBuffer());
    expect(lateBytes.byteLength).toBe(length);
    expect(lateBytes.every((byte, i) => byte === expected[i])).toBe(true);
    const hex = [...new Uint8Array(await digest.digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(hex).toBe(await sha256(expected));
    // Reused: a refilled buffer was detached from the chunk that had it (so a view kept by mistake reads as empty).
    expect(seen.length).toBe(40);
    expect(seen.filter((chunk) => chunk.byteLength === 0).length).toBeGreaterThanOrEqual(36);
  });

  it("leaves alone a chunk nothing hands back, and one from a stream built in JavaScript", async () => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of nativeChunks(nativeBody(8, CHUNK), { min: CHUNK, max: CHUNK })) chunks.push(chunk);
    expect(chunks.map((c) => c.byteLength)).toEqual(Array(8).fill(CHUNK));
    const js = new Uint8Array([1, 2, 3]);
    recycleChunk(js);
    recycleChunk(js);
    expect([...js]).toEqual([1, 2, 3]);
  });

  it("refills a buffer only from the stream it came from", async () => {
    const a = nativeChunks(nativeBody(4, CHUNK), { min: CHUNK, max: CHUNK }).getReader();
    const { readable, writable } = new IdentityTransformStream();
    const feeding = (async () => {
      const writer = writable.getWriter();
      for (let p = 0; p < 4; p++) await writer.write(new Uint8Array(CHUNK).fill(0xee));
      await writer.close();
    })();
    const b = nativeChunks(readable, { min: CHUNK, max: CHUNK }).getReader();
    const first = (await a.read()).value!;
    const copy = first.slice();
    recycleChunk(first);
    recycleChunk(first);
    const fromB: Uint8Array[] = [];
    for (let next = await b.read(); !next.done; next = await b.read()) fromB.push(next.value);
    await feeding;
    // b read its own bytes, never into a's buffer: a's chunk kept its bytes or was refilled by a (and so detached).
    expect(fromB.every((chunk) => chunk.byteLength === CHUNK && chunk.every((byte) => byte === 0xee))).toBe(true);
    expect(first.byteLength === 0 || first.every((byte, i) => byte === copy[i])).toBe(true);
    const rest: Uint8Array[] = [];
    for (let next = await a.read(); !next.done; next = await a.read()) rest.push(next.value.slice());
    const all = new Uint8Array(await new Blob([copy, ...rest]).arrayBuffer());
    expect(all.every((byte, i) => byte === byteAt(i))).toBe(true);
    expect(first.byteLength).toBe(0);
  });

  it("a source that fails aborts every sink: nothing is stored", async () => {
    const key = `copy-chunks/${++counter}`;
    const fixed = new FixedLengthStream(40 * 4096);
    const digest = new crypto.DigestStream("SHA-256");
    digest.digest.catch(() => undefined);
    const putting = env.BUCKET.put(key, fixed.readable).then(
      () => "stored",
      () => "refused",
    );
    const source = nativeChunks(nativeBody(20, 4096, "fail"), { min: CHUNK, max: CHUNK });
    expect(await copyChunks(source, [digest, fixed.writable])).toBe(false);
    expect(await putting).toBe("refused");
    expect(await env.BUCKET.head(key)).toBeNull();
    await expect(digest.digest).rejects.toThrow();
  });

  it("a source that fails after its last byte leaves every sink short of it: the put stores nothing", async () => {
    // The runtime stores a put whose FixedLengthStream reached its length even when the stream is
    // aborted after; the last chunk goes only once the source has ended cleanly, so it never does.
    const key = `copy-chunks/${++counter}`;
    const fixed = new FixedLengthStream(20 * 4096);
    const putting = env.BUCKET.put(key, fixed.readable).then(
      () => "stored",
      () => "refused",
    );
    const got: number[] = [];
    const counting = new WritableStream<Uint8Array>({ write: (chunk) => void got.push(chunk.byteLength) });
    const source = nativeChunks(nativeBody(20, 4096, "fail"), { min: 4096, max: 4096 });
    expect(await copyChunks(source, [fixed.writable, counting])).toBe(false);
    expect(await putting).toBe("refused");
    expect(await env.BUCKET.head(key)).toBeNull();
    expect(got.reduce((a, b) => a + b, 0)).toBeLessThan(20 * 4096);
  });

  it("a cut stops a copy until its source has ended cleanly, never after; a signal stops it at any point", async () => {
    /** Three chunks, then the end; the sink's write of the third waits until `release`. */
    const copy = (options: Parameters<typeof copyChunks>[2]) => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let reached!: () => void;
      const atLast = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const chunks = [1, 2, 3].map((n) => new Uint8Array(10).fill(n));
      const source = new ReadableStream<Uint8Array>({
        pull: (c) => {
          const next = chunks.shift();
          if (next) c.enqueue(next);
          else c.close();
        },
      });
      const got: number[] = [];
      const sink = new WritableStream<Uint8Array>({
        async write(chunk) {
          if (chunk[0] === 3) {
            reached();
            await released;
          }
          got.push(chunk[0]!);
        },
      });
      return { copying: copyChunks(source, [sink], options), atLast, release, got };
    };
    const cut = new AbortController();
    const ended = copy({ cut: cut.signal });
    await ended.atLast;
    cut.abort(new Error("revoked"));
    ended.release();
    expect(await ended.copying).toBe(true);
    expect(ended.got).toEqual([1, 2, 3]);
    const stop = new AbortController();
    const stopped = copy({ signal: stop.signal });
    await stopped.atLast;
    stop.abort(new Error("host answered"));
    stopped.release();
    expect(await stopped.copying).toBe(false);
    // Cut before the end: the copy stops there.
    const early = new AbortController();
    early.abort();
    const cutEarly = copy({ cut: early.signal });
    cutEarly.release();
    expect(await cutEarly.copying).toBe(false);
  });

  it("a sink that fails cancels the source and aborts the other sinks", async () => {
    let cancelled: unknown = null;
    const source = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array(10)),
      cancel: (reason) => {
        cancelled = reason;
      },
    });
    let writes = 0;
    const failing = new WritableStream<Uint8Array>({
      write: () => {
        if (++writes === 3) throw new Error("storage failed");
      },
    });
    const other = new FixedLengthStream(1000);
    const reading = new Response(other.readable).arrayBuffer().then(
      () => "whole",
      () => "aborted",
    );
    expect(await copyChunks(source, [failing, other.writable])).toBe(false);
    expect(String(cancelled)).toContain("storage failed");
    expect(await reading).toBe("aborted");
  });

  it("an abort stops a copy whose write waits on a sink nobody reads, at once", async () => {
    let cancelled = false;
    const source = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array(10)),
      cancel: () => {
        cancelled = true;
      },
    });
    const stuck = new FixedLengthStream(1000);
    const controller = new AbortController();
    const copying = copyChunks(source, [stuck.writable], { signal: controller.signal });
    await scheduler.wait(20);
    controller.abort(new Error("revoked"));
    expect(await copying).toBe(false);
    expect(cancelled).toBe(true);
    // Aborted before it starts: nothing is read.
    let pulled = 0;
    const untouched = new ReadableStream<Uint8Array>({
      pull: (c) => {
        pulled++;
        c.enqueue(new Uint8Array(1));
      },
    });
    const done = new AbortController();
    done.abort();
    expect(await copyChunks(untouched, [new FixedLengthStream(1).writable], { signal: done.signal })).toBe(false);
    expect(pulled).toBeLessThanOrEqual(1);
  });
});
