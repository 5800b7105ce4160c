import { type RpcTransport, WebSocketTransport } from "capnweb";
import { refusal } from "../../shared/refusals.ts";
import { yieldTurn } from "../../shared/yield-turn.ts";

/** WebSocket close code for a session whose cap died (4000–4999 are the application's). */
const CAP_DEAD_CLOSE = 4404;
/** WebSocket close code for a session that kept calling past its rate. */
const FLOOD_CLOSE = 4429;
/** How long a session whose cap died waits for its next answer to go out before closing anyway. */
const CLOSE_ANYWAY_MS = 10_000;

/**
 * capnweb's WebSocket transport, able to close its session once the main cap
 * is found dead. Not at once: the answer that found it dead goes out only
 * when the client's `pull` for it arrives, which may be a message later, so
 * the socket closes after the next answer (`resolve` or `reject`) is sent,
 * or after {@link CLOSE_ANYWAY_MS} if none is.
 */
export class ClosingTransport implements RpcTransport {
  readonly #socket: WebSocket;
  readonly #inner: WebSocketTransport;
  #closing = false;

  constructor(socket: WebSocket) {
    this.#socket = socket;
    this.#inner = new WebSocketTransport(socket);
  }

  send(message: string): void {
    this.#inner.send(message);
    if (this.#closing && (message.startsWith('["resolve",') || message.startsWith('["reject",'))) this.#close();
  }

  /**
   * The next message, after a turn of the runtime: capnweb reads queued
   * messages as resolved promises, so a burst of thousands would all be
   * parsed and started before workerd's one thread served anyone else.
   */
  async receive(): Promise<string> {
    const message = await this.#inner.receive();
    await yieldTurn();
    return message;
  }

  abort(reason: unknown): void {
    this.#inner.abort(reason);
  }

  /** The main cap is dead: every stub of the session dies with the socket. */
  closeAfterNextAnswer(): void {
    if (this.#closing) return;
    this.#closing = true;
    setTimeout(() => this.#close(), CLOSE_ANYWAY_MS);
  }

  /** The client kept calling past its rate: the session ends now, and what it still queued is never read. */
  closeFlooded(): void {
    this.#closing = true;
    try {
      this.#socket.close(FLOOD_CLOSE, refusal("rpcFlooded").message);
    } catch {
      // Already closed by the client.
    }
  }

  #close(): void {
    try {
      this.#socket.close(CAP_DEAD_CLOSE, refusal("noSuchCap").message);
    } catch {
      // Already closed by the client.
    }
  }
}
