import { afterEach, describe, expect, it, vi } from "vitest";
import { SETTLE_BYTES, settleBody } from "./settle-body.ts";

/** A body that sends one byte per `everyMs`, forever, and says when it was cancelled. */
function drip(everyMs: number) {
  let cancelled = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setInterval(() => controller.enqueue(new Uint8Array(1)), everyMs);
    },
    cancel() {
      cancelled = true;
      clearInterval(timer);
    },
  });
  return { body, cancelled: () => cancelled };
}

describe("settleBody", () => {
  afterEach(() => vi.useRealTimers());

  it("reads a small body to its end, so the connection can carry the next request", async () => {
    const chunks = [new Uint8Array(1000), new Uint8Array(1000)];
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (pulled < chunks.length) c.enqueue(chunks[pulled++]!);
        else c.close();
      },
    });
    await settleBody(body);
    expect(pulled).toBe(2);
  });

  it("cancels, unread, a body declared larger than it will drain", async () => {
    const { body, cancelled } = drip(10);
    await settleBody(body, SETTLE_BYTES + 1);
    expect(cancelled()).toBe(true);
  });

  it("never waits long on a sender that drips: cut within its total bound", async () => {
    vi.useFakeTimers();
    const { body, cancelled } = drip(500);
    let settled = false;
    const settling = settleBody(body).then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(4_000);
    expect(settled).toBe(false); // still within the bound, and still receiving
    await vi.advanceTimersByTimeAsync(2_000);
    await settling;
    expect(cancelled()).toBe(true);
  });

  it("cuts a sender that stalls", async () => {
    vi.useFakeTimers();
    const body = new ReadableStream<Uint8Array>({ start() {} });
    const settling = settleBody(body);
    await vi.advanceTimersByTimeAsync(2_100);
    await expect(settling).resolves.toBeUndefined();
  });
});
