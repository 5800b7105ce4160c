import type { WatchEvent } from "../shared/wire-types.ts";
import type { VersionRow } from "./version-journal.ts";

/** One change as a watcher sees it (the path relative to its own root): the wire shape. */
export type { WatchEvent };

/**
 * Bytes of events a watcher may leave unread before it is cut off (it
 * resumes with `since`), its backlog included. Counted in bytes, not events:
 * a path may be 1 KiB, and a stream whose reader is gone is never drained,
 * so this times {@link MAX_WATCHERS} is what dropped streams can hold.
 */
export const MAX_QUEUED_BYTES = 128 * 1024;
/**
 * Watchers one journal holds at once: each commit's work is bounded by them.
 * A new one beyond makes room by ending the oldest (which resumes), rather
 * than being refused: a stream its reader cancelled is never cancelled here
 * (the runtime does not pass a cancel back over RPC), so refusing would let
 * 256 opened-and-dropped streams shut out every watcher of the root.
 */
export const MAX_WATCHERS = 256;
/**
 * Watchers one cap holds at once in its root, both kinds together: its fair
 * share, so one holder (a read cap over an empty folder, say) cannot fill the
 * root and end every other cap's watcher. Past it a cap's own oldest ends.
 */
export const MAX_WATCHERS_PER_CAP = 32;
const encoder = new TextEncoder();

/**
 * Whose watcher ends to make room for a new one of `capId`, given how many
 * each cap holds (`held`, both kinds): its own at its share; else, with the
 * root full, the cap that would hold the most, `capId` itself on a tie. So a
 * cap's watcher is ended by another cap's only while it holds more than that
 * cap would. `null`: there is room.
 */
export function evictionVictim(held: ReadonlyMap<string, number>, capId: string): string | null {
  const own = held.get(capId) ?? 0;
  if (own >= MAX_WATCHERS_PER_CAP) return capId;
  let total = 0;
  let heaviest: string | null = null;
  let most = 0;
  for (const [id, count] of held) {
    total += count;
    if (id !== capId && count > most) [heaviest, most] = [id, count];
  }
  if (total < MAX_WATCHERS) return null;
  return own > 0 && own + 1 >= most ? capId : heaviest;
}

interface Watcher {
  scope: string;
  capId: string;
  controller: ReadableStreamDefaultController<Uint8Array>;
}

/**
 * The live watchers of one journal, each a server-sent-event stream with a
 * scope (its cap's root below level 0). An event goes only to watchers whose
 * scope holds its path, with the path made relative to that scope. Held in
 * memory by the journal while a stream is open; a watcher that falls behind
 * by {@link MAX_QUEUED_BYTES} is closed rather than buffered without bound.
 */
export class WatchFeed {
  private readonly watchers = new Set<Watcher>();

  /** The cap of each open stream. */
  *caps(): Iterable<string> {
    for (const watcher of this.watchers) yield watcher.capId;
  }

  /**
   * Ends the oldest stream of the cap `capId`. It was sent every event up to
   * `newest`, so it ends telling it to resume after that, as a cut backlog
   * does. False when that cap holds no stream.
   */
  endOldest(capId: string, newest: number): boolean {
    let oldest: Watcher | undefined;
    for (const watcher of this.watchers)
      if (watcher.capId === capId) {
        oldest = watcher;
        break;
      }
    if (!oldest) return false;
    this.watchers.delete(oldest);
    try {
      oldest.controller.enqueue(resumeFrame(newest));
      oldest.controller.close();
    } catch {
      // Its stream had ended already.
    }
    return true;
  }

  /** A new stream of the cap `capId` for `scope`, first carrying `backlog` (rows already in scope order), then live events. */
  open(scope: string, capId: string, backlog: VersionRow[], resumeAfter: number | null): ReadableStream<Uint8Array> {
    let watcher!: Watcher;
    return new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          watcher = { scope, capId, controller };
          controller.enqueue(encoder.encode(": watching\n\n"));
          let queued = 0;
          for (const [i, row] of backlog.entries()) {
            const framed = frame(scope, row);
            queued += framed.byteLength;
            // More backlog than a watcher may hold: the stream ends after the last event that fits.
            if (queued > MAX_QUEUED_BYTES && i > 0) {
              resumeAfter = backlog[i - 1]!.id;
              break;
            }
            controller.enqueue(framed);
          }
          // The backlog was cut: this stream ends, and the watcher resumes after its last event.
          if (resumeAfter !== null) {
            controller.enqueue(resumeFrame(resumeAfter));
            controller.close();
            return;
          }
          this.watchers.add(watcher);
        },
        cancel: () => {
          this.watchers.delete(watcher);
        },
      },
      { highWaterMark: MAX_QUEUED_BYTES, size: (chunk) => chunk.byteLength },
    );
  }

  publish(rows: VersionRow[]): void {
    for (const watcher of this.watchers) {
      for (const row of rows) {
        if (!inScope(watcher.scope, row.path)) continue;
        if ((watcher.controller.desiredSize ?? 0) <= 0) {
          this.watchers.delete(watcher);
          watcher.controller.close();
          break;
        }
        watcher.controller.enqueue(frame(watcher.scope, row));
      }
    }
  }
}

export function inScope(scope: string, path: string): boolean {
  return path.startsWith(scope) && path.length > scope.length;
}

function resumeFrame(after: number): Uint8Array {
  return encoder.encode(`event: resume\ndata: ${resumeData(after)}\n\n`);
}

function frame(scope: string, row: VersionRow): Uint8Array {
  return encoder.encode(`id: ${row.id}\ndata: ${eventJson(scope, row)}\n\n`);
}

/** The `resume` signal's payload: where a cut-off watcher goes on from. */
export function resumeData(after: number): string {
  return JSON.stringify({ since: String(after) });
}

/** The one serializer of a change, for both kinds of watcher: `row` as seen from `scope`. */
export function eventJson(scope: string, row: VersionRow): string {
  const event: WatchEvent = {
    path: row.path.slice(scope.length),
    operation: row.op,
    size: row.size,
    sha256: row.sha256,
    actor: row.actor,
    version: String(row.id),
  };
  return JSON.stringify(event);
}
