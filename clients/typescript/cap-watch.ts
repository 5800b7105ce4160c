import type { WatchEvent } from "../../shared/wire-types.ts";
import { CapError } from "./cap-error.ts";
import { serverEvents } from "./event-stream.ts";

export interface WatchOptions {
  /** A version id: start with the changes after it (e.g. the last `version` seen before a restart). */
  since?: string;
  /** Aborting it ends the iteration quietly. */
  signal?: AbortSignal;
}

/** How the watch reaches the vault: open a stream after a version, and ask whether the cap still lives. */
export interface WatchSource {
  open(since: string | undefined, signal: AbortSignal | undefined): Promise<ReadableStream<Uint8Array>>;
  /** Resolves while the cap lives; rejects with the vault's CapError (`no_such_cap`) once it is revoked or expired. */
  alive(): Promise<unknown>;
}

/**
 * Before reconnecting after a stream that brought nothing: a stream the
 * journal ends at once (a root with 256 watchers ends the oldest) must not
 * turn into a request loop.
 */
const IDLE_RECONNECT_MS = 1000;

/**
 * The changes of a cap's subtree, followed across reconnects: the vault ends
 * a stream to say "resume from here" (`event: resume`, or a watcher too far
 * behind) and also when the cap is revoked or expires. Which one is asked of
 * the cap itself, so revocation ends the iteration with the vault's own
 * CapError, and anything else resumes after the last version seen, never
 * skipping or repeating one.
 */
export async function* watchChanges(source: WatchSource, options: WatchOptions): AsyncGenerator<WatchEvent> {
  const { signal } = options;
  let since = options.since;
  try {
    while (!signal?.aborted) {
      const stream = await source.open(since, signal);
      /** Whether this stream moved `since` on. */
      let delivered = false;
      for await (const frame of serverEvents(stream)) {
        // Frames already read are not handed out once the caller said stop.
        if (signal?.aborted) return;
        if (frame.event === "resume") {
          const next = versionId(parseJson<{ since?: unknown }>(frame.data).since);
          delivered ||= next !== since;
          since = next;
        } else if (frame.event === null) {
          const change = parseJson<WatchEvent>(frame.data);
          since = versionId(change.version);
          delivered = true;
          yield change;
        }
      }
      if (signal?.aborted) return;
      await source.alive();
      if (!delivered) await pause(IDLE_RECONNECT_MS, signal);
    }
  } catch (error) {
    // Stopped on purpose: fetch and the body reject with an AbortError, which is no failure.
    if (signal?.aborted) return;
    if (error instanceof CapError) throw error;
    throw new CapError("unavailable", 0, "the vault's change stream broke off");
  }
}

/**
 * Where to resume, as the vault sent it. Anything but a non-empty string is
 * refused: as `undefined` or `""` it would reopen the watch live, silently
 * skipping every change made in between.
 */
function versionId(value: unknown): string {
  if (typeof value === "string" && value !== "") return value;
  throw new CapError("unavailable", 200, "malformed event stream from vault");
}

function parseJson<T>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CapError("unavailable", 200, "malformed event stream from vault");
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
