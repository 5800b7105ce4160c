import { failed, ok, type Result } from "../../shared/result.ts";
import { mcpRefusal } from "./mcp-refusals.ts";

/**
 * Change streams (the 2025 GET stream, the 2026 `subscriptions/listen`) one
 * cap may hold open in this isolate at once, both eras together. Counted
 * here, where a client's disconnect is seen (the journal never sees one);
 * the root's journal bounds a cap's watchers across isolates as well.
 */
export const MAX_MCP_STREAMS = 8;
/** Bytes a stream holds for a reader that has not taken them; past it, the feed is not read on. */
const STREAM_BUFFER_BYTES = 16 * 1024;
/**
 * A comment this often keeps proxies from closing an idle stream, and finds
 * a client that went away: the runtime aborts the request (and this gives
 * its place back) only once a write to a closed connection fails.
 */
const KEEPALIVE_MS = 5_000;

/** One change as the streams see it: from the cap's watch feed, or its MCP session feed (with the URIs subscribed). */
export interface FeedChange {
  path: string;
  operation: string;
  version: string;
  uris?: string[];
}

const open = new Map<string, number>();

/** A place for one more change stream of `capId`, and how to give it back (once). */
export function takeStreamSlot(capId: string): Result<() => void> {
  const held = open.get(capId) ?? 0;
  if (held >= MAX_MCP_STREAMS) return failed(mcpRefusal("tooManyStreams", { max: MAX_MCP_STREAMS }));
  open.set(capId, held + 1);
  let given = false;
  return ok(() => {
    if (given) return;
    given = true;
    const left = (open.get(capId) ?? 1) - 1;
    if (left <= 0) open.delete(capId);
    else open.set(capId, left);
  });
}

/** One JSON-RPC message as an SSE `message` event, with the version it follows as its id when given. */
export function messageFrame(message: unknown, id?: string): string {
  return `event: message\n${id ? `id: ${id}\n` : ""}data: ${JSON.stringify(message)}\n\n`;
}

export interface ChangeStreamParts {
  /** Frames sent first (the 2026 acknowledgement). */
  first?: string;
  /** The frames one change becomes (none to skip it). */
  frames(change: FeedChange): string;
  /** Frames sent when the feed ends by itself: revoked, expired, or cut off behind. */
  last?: () => string;
  /** Runs once when the stream ends, however it ends. */
  ended(): void;
  /** The request's own signal: aborted when its client goes away, which the stream's cancel does not always say. */
  signal: AbortSignal;
}

const encoder = new TextEncoder();

/**
 * `feed` (server-sent events of changes) as an SSE body of MCP messages.
 * The feed is read only when the reader has taken what was sent, so a slow
 * reader leaves the events in the journal, which cuts it off at its bound;
 * this holds at most {@link STREAM_BUFFER_BYTES} and one read's frames.
 */
export function changeStream(feed: ReadableStream<Uint8Array>, parts: ChangeStreamParts): ReadableStream<Uint8Array> {
  const reader = feed.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  let timer: ReturnType<typeof setInterval> | undefined;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    if (timer !== undefined) clearInterval(timer);
    parts.signal.removeEventListener("abort", gone);
    parts.ended();
  };
  const gone = () => {
    finish();
    reader.cancel().catch(() => undefined);
  };
  parts.signal.addEventListener("abort", gone, { once: true });
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (parts.first) controller.enqueue(encoder.encode(parts.first));
        timer = setInterval(() => {
          if ((controller.desiredSize ?? 0) > 0) controller.enqueue(encoder.encode(": keepalive\n\n"));
        }, KEEPALIVE_MS);
      },
      async pull(controller) {
        // Read on until a read gives something to send: a feed event may become no frame at all.
        for (;;) {
          const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
          if (done) return;
          if (next.done) {
            const last = parts.last?.();
            if (last) controller.enqueue(encoder.encode(last));
            controller.close();
            finish();
            return;
          }
          pending += next.value;
          let out = "";
          for (let at = pending.indexOf("\n\n"); at >= 0; at = pending.indexOf("\n\n")) {
            const change = changeOf(pending.slice(0, at));
            pending = pending.slice(at + 2);
            if (change) out += parts.frames(change);
          }
          if (out) {
            controller.enqueue(encoder.encode(out));
            return;
          }
        }
      },
      cancel() {
        finish();
        return reader.cancel().catch(() => undefined);
      },
    },
    { highWaterMark: STREAM_BUFFER_BYTES, size: (chunk) => chunk.byteLength },
  );
}

/** An SSE response of `body`. */
export function sseResponse(body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Response {
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache, no-transform",
      "content-encoding": "identity",
      ...headers,
    },
  });
}

/** A change of an SSE frame of the feed; `null` for a comment or a `resume` frame. */
function changeOf(frame: string): FeedChange | null {
  let data = "";
  for (const line of frame.split("\n")) {
    if (line.startsWith("event: ")) return null;
    if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (!data) return null;
  const { path, operation, version, uris } = JSON.parse(data) as FeedChange;
  return { path, operation, version, ...(uris ? { uris } : {}) };
}

/** Operations that add a file to the cap's resource list or take one out of it. */
export const changesList = (operation: string) => operation !== "modified";
