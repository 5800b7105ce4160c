import { afterEach, describe, expect, it, vi } from "vitest";
import { timedBody, type UploadLimits } from "./upload-limits.ts";

const LIMITS: UploadLimits = { idleMs: 1_000, minTotalMs: 2_000, minBytesPerSecond: 100, maxConcurrent: 4 };

describe("timedBody", () => {
  afterEach(() => vi.useRealTimers());

  it("cuts a body that never pauses long but falls behind the minimum rate, long before its final deadline", async () => {
    vi.useFakeTimers();
    // One byte every 500 ms: never idle for 1 s, but 2 bytes/s against a floor of 100.
    let timer: ReturnType<typeof setInterval> | undefined;
    const source = new ReadableStream<Uint8Array>({
      start(c) {
        timer = setInterval(() => c.enqueue(new Uint8Array(1)), 500);
      },
      cancel: () => clearInterval(timer),
    });
    // 1 MB declared: judged only at the end, it could take 2 s + 10,000 s.
    const { body, timedOut } = timedBody(source, 1_000_000, LIMITS);
    const reading = (async () => {
      const reader = body.getReader();
      try {
        for (;;) if ((await reader.read()).done) return "done";
      } catch {
        return "cut";
      }
    })();
    await vi.advanceTimersByTimeAsync(4_000);
    expect(await reading).toBe("cut");
    expect(timedOut()).toBe(true);
  });

  it("lets a body that keeps the rate through", async () => {
    const bytes = new Uint8Array(300);
    const { body, timedOut } = timedBody(new Response(bytes).body!, bytes.length, LIMITS);
    expect((await new Response(body).arrayBuffer()).byteLength).toBe(300);
    expect(timedOut()).toBe(false);
  });
});
