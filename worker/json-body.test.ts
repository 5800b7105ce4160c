import { afterEach, describe, expect, it, vi } from "vitest";
import { readJsonBody } from "./json-body.ts";

const post = (body: ReadableStream<Uint8Array>) =>
  new Request("https://vault.test/x", { method: "POST", body, duplex: "half" } as RequestInit);

describe("readJsonBody", () => {
  afterEach(() => vi.useRealTimers());

  it("reads a JSON body that arrives", async () => {
    expect(await readJsonBody(new Request("https://vault.test/x", { method: "POST", body: '{"a":1}' }), 1024)).toEqual({
      ok: true,
      value: { a: 1 },
    });
  });

  it("refuses, within its bounds, a body that stalls or drips instead of waiting on it", async () => {
    vi.useFakeTimers();
    const enc = new TextEncoder();
    let timer: ReturnType<typeof setInterval> | undefined;
    let cancelled = false;
    // A byte every 5 s: never idle for 10 s, never done.
    const drip = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode("{"));
        timer = setInterval(() => c.enqueue(enc.encode(" ")), 5_000);
      },
      cancel() {
        cancelled = true;
        clearInterval(timer);
      },
    });
    const reading = readJsonBody(post(drip), 1024);
    await vi.advanceTimersByTimeAsync(61_000);
    const result = await reading;
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error.code).toBe("bad_request");
    expect(cancelled).toBe(true);

    const stall = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(enc.encode("{")) });
    const stalled = readJsonBody(post(stall), 1024);
    await vi.advanceTimersByTimeAsync(10_001);
    expect((await stalled).ok).toBe(false);
  });
});
