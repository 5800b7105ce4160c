import { describe, expect, it } from "vitest";
import { changeStream, MAX_MCP_STREAMS, takeStreamSlot } from "./mcp-change-stream.ts";

const encoder = new TextEncoder();

/** A feed that makes a change each time it is read, counting how often that was. */
function endlessFeed() {
  const made = { count: 0 };
  const feed = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        made.count++;
        const change = { path: `notes/${made.count}.md`, operation: "created", version: String(made.count) };
        controller.enqueue(encoder.encode(`id: ${made.count}\ndata: ${JSON.stringify(change)}\n\n`));
      },
    },
    { highWaterMark: 0 },
  );
  return { feed, made };
}

/** Lets every pending pull and read run. */
const settle = async () => {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};

describe("changeStream", () => {
  it("reads no further into the feed than its reader has taken, a bounded buffer ahead", async () => {
    const { feed, made } = endlessFeed();
    const frame = `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/resources/list_changed" })}\n\n`;
    const stream = changeStream(feed, { frames: () => frame, ended: () => {}, signal: new AbortController().signal });
    await settle();
    const ahead = made.count;
    // 16 KiB of frames, and the few chunks the text decoder's pipe holds: a reader that never
    // reads leaves the rest in the journal, which cuts it off.
    expect(ahead).toBeGreaterThan(0);
    expect(ahead * frame.length).toBeLessThanOrEqual(16 * 1024 + 4 * frame.length);
    await settle();
    expect(made.count).toBe(ahead);
    // Once read, it reads on.
    const reader = stream.getReader();
    for (let i = 0; i < ahead + 5; i++) await reader.read();
    await settle();
    expect(made.count).toBeGreaterThan(ahead);
    await reader.cancel();
  });

  it("ends, and says so once, when its request's client goes away", async () => {
    const { feed } = endlessFeed();
    const gone = new AbortController();
    let ended = 0;
    const stream = changeStream(feed, { frames: () => "", ended: () => ended++, signal: gone.signal });
    gone.abort();
    await stream.cancel();
    expect(ended).toBe(1);
  });
});

describe("takeStreamSlot", () => {
  it(`holds ${MAX_MCP_STREAMS} streams per cap, refuses the next as too_large, and frees a place given back once`, () => {
    const releases = Array.from({ length: MAX_MCP_STREAMS }, () => takeStreamSlot("cap-a"));
    expect(releases.every((r) => r.ok)).toBe(true);
    const refused = takeStreamSlot("cap-a");
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.error.code).toBe("too_large");
    expect(takeStreamSlot("cap-b").ok).toBe(true);
    const first = releases[0]!;
    if (first.ok) {
      first.value();
      first.value();
    }
    expect(takeStreamSlot("cap-a").ok).toBe(true);
    expect(takeStreamSlot("cap-a").ok).toBe(false);
  });
});
