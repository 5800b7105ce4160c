import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { R2Storage } from "../../storage-adapters/r2-storage.ts";
import { TOO_MANY_UPLOADS, TOO_SLOW, type UploadLimits } from "../../storage-adapters/upload-limits.ts";
import { fileAt } from "../checked-paths.ts";

/**
 * Slow uploads into the real bucket: a stalled or trickling body fails the
 * write with nothing stored, and only a bounded number run at once.
 */
const limits = (over: Partial<UploadLimits>): UploadLimits => ({
  idleMs: 300,
  minTotalMs: 300,
  minBytesPerSecond: 1_000_000,
  maxConcurrent: 64,
  ...over,
});

function stalledBody(): {
  body: ReadableStream<Uint8Array>;
  fail(): void;
  cancelled: () => boolean;
  pulled: Promise<void>;
} {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let sent = false;
  let cancelled = false;
  let markPulled!: () => void;
  const pulled = new Promise<void>((resolve) => (markPulled = resolve));
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    pull: (c) => {
      if (!sent) c.enqueue(new TextEncoder().encode("x"));
      sent = true;
      markPulled();
      return new Promise<void>(() => undefined);
    },
    cancel: () => {
      cancelled = true;
    },
  });
  return { body, fail: () => controller.error(new Error("client gone")), cancelled: () => cancelled, pulled };
}

const code = (r: { ok: boolean; error?: { code: string; message: string } }) =>
  r.ok ? "ok" : `${r.error!.code}: ${r.error!.message}`;

describe("R2 uploads that are too slow", () => {
  it("a stalled body times out, stores nothing, and is cancelled", async () => {
    const storage = new R2Storage(env.BUCKET, limits({ idleMs: 300, minTotalMs: 60_000 }));
    const stalled = stalledBody();
    const result = await storage.write(fileAt(["slow/"], "stalled.txt"), stalled.body, {
      length: 100,
      contentType: "text/plain",
    });
    expect(code(result)).toBe(`bad_request: ${TOO_SLOW}`);
    expect(stalled.cancelled()).toBe(true);
    expect(await env.BUCKET.head("slow/stalled.txt")).toBeNull();
  });

  it("a trickling body times out at its deadline", async () => {
    const storage = new R2Storage(env.BUCKET, limits({ idleMs: 10_000, minTotalMs: 300 }));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        if (sent++ < 1000) c.enqueue(new Uint8Array([120]));
        else c.close();
      },
    });
    const result = await storage.write(fileAt(["slow/"], "trickle.txt"), body, {
      length: 1000,
      contentType: "text/plain",
    });
    expect(code(result)).toBe(`bad_request: ${TOO_SLOW}`);
    expect(await env.BUCKET.head("slow/trickle.txt")).toBeNull();
  });

  it("past the bound on uploads at once, a write is refused with unavailable until one ends", async () => {
    const storage = new R2Storage(env.BUCKET, limits({ idleMs: 600_000, minTotalMs: 600_000, maxConcurrent: 2 }));
    const stalled = [stalledBody(), stalledBody()];
    const writes = stalled.map((s, i) =>
      storage.write(fileAt(["slow/"], `held-${i}`), s.body, { length: 10, contentType: "text/plain" }),
    );
    // A body is pulled only once its write passed its checks and took a slot.
    await Promise.all(stalled.map((s) => s.pulled));
    const refused = await storage.write(fileAt(["slow/"], "refused.txt"), new Response("hello").body!, {
      length: 5,
      contentType: "text/plain",
    });
    expect(code(refused)).toBe(`unavailable: ${TOO_MANY_UPLOADS}`);
    for (const s of stalled) s.fail();
    expect((await Promise.all(writes)).map((r) => r.ok)).toEqual([false, false]);
    const taken = await storage.write(fileAt(["slow/"], "taken.txt"), new Response("hello").body!, {
      length: 5,
      contentType: "text/plain",
    });
    expect(code(taken)).toBe("ok");
    expect(await env.BUCKET.head("slow/held-0")).toBeNull();
  });
});
