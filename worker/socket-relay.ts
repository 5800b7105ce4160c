/**
 * The worker's end of a watcher socket: the client gets a socket of this
 * request's own pair, and each message and close is relayed to and from the
 * journal's socket, instead of the journal's socket being handed over whole.
 *
 * Why: handed over, the client's connection is the journal's hibernatable
 * socket end to end, and the runtime (workerd 2026-04) does not release a
 * socket the journal closed from a call (revocation's `closeWatchers`, a
 * commit's `publish`) until the journal goes idle: the client had the close
 * frame at once, but its connection (so its `close` event) stayed open about
 * 15 s, and for as long as commits kept the journal awake. Here the close
 * this end sends is an ordinary one: the connection ends when the client
 * answers it (bench/ws-close-probe.ts measures this).
 *
 * What the relay can hold is bounded by what the journal sends a connection
 * before it ends it (watch-sockets.ts, MAX_QUEUED_BYTES).
 */
export function relaySocket(journal: WebSocket): WebSocket {
  const { 0: client, 1: own } = new WebSocketPair();
  journal.accept();
  own.accept();
  pipe(journal, own);
  pipe(own, journal);
  return client;
}

/** Relays `from`'s messages to `to`, and its close, once, to both. */
function pipe(from: WebSocket, to: WebSocket): void {
  from.addEventListener("message", (event) => {
    try {
      to.send(event.data);
    } catch {
      // `to` is closing: its close reaches `from` through the other pipe.
    }
  });
  const end = (code?: number, reason?: string) => {
    close(to, code, reason);
    close(from, code, reason);
  };
  from.addEventListener("close", (event) => end(event.code, event.reason));
  from.addEventListener("error", () => end(INTERNAL));
}

const INTERNAL = 1011;

/** Codes a peer may not send (1005 no code, 1006 abnormal, 1015 TLS) close with no code instead. */
function close(ws: WebSocket, code?: number, reason?: string): void {
  const sendable = code !== undefined && code >= 1000 && code < 5000 && ![1004, 1005, 1006, 1015].includes(code);
  try {
    if (sendable) ws.close(code, reason);
    else ws.close();
  } catch {
    // Closed already.
  }
}
