import type { RpcStub } from "capnweb";
import { RpcTarget } from "capnweb";
import type { RpcWatchMessage } from "../../shared/wire-types.ts";

/** A callback passed by reference from the client: capnweb calls it over the session. */
export type WatchCallback = RpcStub<(message: RpcWatchMessage) => unknown>;

/** What `watch` answers: the client stops the feed with it (ending the session stops it too). */
export class WatchHandle extends RpcTarget {
  readonly #stop: () => void;
  constructor(stop: () => void) {
    super();
    this.#stop = stop;
  }
  stop(): null {
    this.#stop();
    return null;
  }
}

/**
 * Feeds the cap's server-sent-event stream (GET /watch: the same journal,
 * scope and revocation) to a client callback, one awaited call per change,
 * so a slow client slows the reading and the journal cuts it off at its bound
 * rather than the worker buffering. Ends with one `end` message when the feed
 * closes (revoked, cut behind, stopped), unless the callback itself broke.
 */
export async function pumpWatch(feed: ReadableStream<Uint8Array>, callback: WatchCallback, stop: AbortSignal) {
  const reader = feed.pipeThrough(new TextDecoderStream()).getReader();
  const cancel = () => reader.cancel().catch(() => undefined);
  stop.addEventListener("abort", cancel, { once: true });
  let last: string | null = null;
  let pending = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending += value;
      let cut = pending.indexOf("\n\n");
      while (cut >= 0) {
        const frame = parseFrame(pending.slice(0, cut));
        pending = pending.slice(cut + 2);
        cut = pending.indexOf("\n\n");
        if (frame?.event === "resume") last = (JSON.parse(frame.data) as { since: string }).since;
        else if (frame?.data) {
          const change = JSON.parse(frame.data) as Omit<Extract<RpcWatchMessage, { type: "change" }>, "type">;
          last = change.version;
          await callback({ type: "change", ...change });
        }
      }
    }
    if (!stop.aborted) await callback({ type: "end", since: last });
  } catch {
    // The callback broke (the session ended or the client threw): stop reading.
    cancel();
  } finally {
    stop.removeEventListener("abort", cancel);
    callback[Symbol.dispose]();
  }
}

function parseFrame(text: string): { event: string | null; data: string } | null {
  let event: string | null = null;
  let data = "";
  for (const line of text.split("\n")) {
    if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  return data ? { event, data } : null;
}
