import { CapError } from "./cap-error.ts";

/** One server-sent event: its `event:` name (null for a plain message), `id:` and joined `data:` lines. */
export interface ServerEvent {
  event: string | null;
  id: string | null;
  data: string;
}

/**
 * A frame the vault sends is an event of at most a few KiB (a path is at most
 * 1 KiB). A stream that runs this long without ending a frame is not the
 * vault's, and is cut off rather than buffered without bound.
 */
const MAX_FRAME_CHARS = 1024 * 1024;

/**
 * The events of a `text/event-stream` body, as the vault writes them
 * (`\n` line ends, frames end with a blank line; `:` lines are comments). Uses only
 * WHATWG streams, so it runs in Node, Workers and browsers. The body is
 * cancelled when the caller stops early.
 */
export async function* serverEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      // Search only where a frame end can be new: from the last character held before this chunk, so a
      // stream that never ends a frame costs linear time, not quadratic, up to MAX_FRAME_CHARS.
      const from = Math.max(0, pending.length - 1);
      pending += value;
      let cut = pending.indexOf("\n\n", from);
      while (cut >= 0) {
        const frame = parseFrame(pending.slice(0, cut));
        pending = pending.slice(cut + 2);
        if (frame) yield frame;
        cut = pending.indexOf("\n\n");
      }
      if (pending.length > MAX_FRAME_CHARS) throw new CapError("unavailable", 200, "malformed event stream from vault");
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

function parseFrame(text: string): ServerEvent | null {
  let event: string | null = null;
  let id: string | null = null;
  const data: string[] = [];
  for (const line of text.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") event = value;
    else if (field === "id") id = value;
    else if (field === "data") data.push(value);
  }
  return data.length === 0 ? null : { event, id, data: data.join("\n") };
}
