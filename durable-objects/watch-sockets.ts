import type { VersionRow } from "./version-journal.ts";
import { eventJson, inScope, MAX_QUEUED_BYTES, resumeData } from "./watch-feed.ts";
import type { SocketWatcher } from "./watch-socket-request.ts";

/** What a socket carries through hibernation (its attachment): the watcher, when it opened, what it was sent. */
interface SocketState extends SocketWatcher {
  opened: number;
  sent: number;
}

/** Ends a socket after its `resume` message, or when its cap is gone. */
const NORMAL = 1000;
/** The client spoke on a one-way socket. */
const POLICY = 1008;
const encoder = new TextEncoder();

export const capTag = (capId: string) => `cap:${capId}`;

/**
 * The WebSocket watchers of one journal, accepted through the hibernation API,
 * so an idle watcher holds no running object: everything a socket needs when
 * the journal wakes is in its attachment. An event goes to the sockets whose
 * scope holds its path, relative to that scope, as the SSE feed sends it.
 *
 * Slow readers: the journal cannot see what a socket left unread (the
 * runtime does not report it reliably), so instead each connection is sent
 * at most {@link MAX_QUEUED_BYTES} of events, its backlog included, then
 * told where to resume and closed. What any socket can hold queued is so
 * bounded like an SSE watcher's, at the cost of a reconnect per 128 KiB of
 * changes; resuming misses nothing.
 */
export class WatchSockets {
  constructor(private readonly ctx: DurableObjectState) {}

  /** Open sockets only: one being closed is no watcher, and takes no room. */
  private open(tag?: string): WebSocket[] {
    return this.ctx.getWebSockets(tag).filter((ws) => ws.readyState === WebSocket.OPEN);
  }

  /** The cap of each open socket. */
  caps(): string[] {
    return this.open().map((ws) => (ws.deserializeAttachment() as SocketState).capId);
  }

  /** A new socket for `watcher`: `backlog` first (rows in order), or up to `resumeAfter` and a `resume`, then live. */
  accept(watcher: SocketWatcher, backlog: VersionRow[], resumeAfter: number | null): Response {
    const { 0: client, 1: server } = new WebSocketPair();
    this.ctx.acceptWebSocket(server, [capTag(watcher.capId)]);
    const state: SocketState = {
      scope: watcher.scope,
      capId: watcher.capId,
      expiresAt: watcher.expiresAt,
      opened: Date.now(),
      sent: 0,
    };
    server.serializeAttachment(state);
    const delivered = backlog.every((row) => this.deliver(server, state, row));
    if (delivered && resumeAfter !== null) end(server, resumeAfter);
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Sends each row to every socket whose scope holds it; a socket whose cap expired is closed instead. */
  publish(rows: VersionRow[]): void {
    for (const ws of this.open()) {
      try {
        const state = ws.deserializeAttachment() as SocketState;
        // Hibernation keeps no timer: the clock is checked at each wake-up, before anything is sent.
        if (state.expiresAt !== null && Date.now() >= state.expiresAt) {
          close(ws, NORMAL);
          continue;
        }
        for (const row of rows) if (inScope(state.scope, row.path) && !this.deliver(ws, state, row)) break;
      } catch {
        // A socket that broke mid-send is closed; the commit it reports on stands either way.
        close(ws, NORMAL);
      }
    }
  }

  /** Closes the sockets of the cap `capId` (its object asks when it is revoked or expires). */
  closeCap(capId: string): number {
    const sockets = this.ctx.getWebSockets(capTag(capId));
    for (const ws of sockets) close(ws, NORMAL);
    return sockets.length;
  }

  /** Ends the socket of `capId` open longest, telling it to resume after `newest` (it was sent everything up to there). */
  endOldest(capId: string, newest: number): void {
    let oldest: { ws: WebSocket; opened: number } | null = null;
    for (const ws of this.open(capTag(capId))) {
      const { opened } = ws.deserializeAttachment() as SocketState;
      if (!oldest || opened < oldest.opened) oldest = { ws, opened };
    }
    if (oldest) end(oldest.ws, newest);
  }

  /** The socket is one-way: a client that sends anything is closed, so it cannot keep the journal awake. */
  refuseMessage(ws: WebSocket): void {
    close(ws, POLICY);
  }

  /** The client closed or the connection broke: complete the close so the runtime forgets the socket. */
  closed(ws: WebSocket): void {
    close(ws, NORMAL);
  }

  /** Sends `row` unless this connection's budget is spent: then ends it to resume at `row`. */
  private deliver(ws: WebSocket, state: SocketState, row: VersionRow): boolean {
    const message = eventJson(state.scope, row);
    const bytes = encoder.encode(message).byteLength;
    // One event always goes, however long: a path fits in a budget several times over.
    if (state.sent > 0 && state.sent + bytes > MAX_QUEUED_BYTES) {
      end(ws, row.id - 1);
      return false;
    }
    state.sent += bytes;
    ws.serializeAttachment(state);
    ws.send(message);
    return true;
  }
}

/** The `resume` signal (as SSE's `event: resume`), then the close. */
function end(ws: WebSocket, after: number): void {
  try {
    ws.send(`{"resume":${resumeData(after)}}`);
  } catch {
    // Closed already: the close below is a no-op too.
  }
  close(ws, NORMAL);
}

function close(ws: WebSocket, code: number): void {
  try {
    ws.close(code);
  } catch {
    // Already closed.
  }
}
