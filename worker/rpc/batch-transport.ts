import type { RpcTransport } from "capnweb";
import { yieldTurn } from "../../shared/yield-turn.ts";

/** Messages of a batch read between two turns of the runtime (see receive). */
const MESSAGES_PER_TURN = 64;

/**
 * The server end of one HTTP batch, as capnweb's own, with one difference
 * that matters: {@link allRead} settles only once every message has been
 * read without the session aborting. The batch's calls wait for it (see
 * RpcSessionBudget.open), so a batch with a malformed message anywhere in
 * it runs nothing at all, not the calls before that message.
 */
export class BatchTransport implements RpcTransport {
  readonly #received: string[];
  readonly #answers: string[] = [];
  readonly #allRead = Promise.withResolvers<void>();
  #read = 0;

  constructor(lines: string[]) {
    this.#received = lines;
  }

  /** Resolves when every message was read; rejects when the session aborted first. */
  get allRead(): Promise<void> {
    return this.#allRead.promise;
  }

  send(message: string): void {
    this.#answers.push(message);
  }

  /**
   * The next line. Every {@link MESSAGES_PER_TURN} lines it waits a turn of
   * the runtime first: capnweb parses each message as soon as the last one
   * was handled, so a batch of thousands would be parsed back to back.
   */
  async receive(): Promise<string> {
    if (++this.#read % MESSAGES_PER_TURN === 0) await yieldTurn();
    const next = this.#received.shift();
    if (next !== undefined) return next;
    this.#allRead.resolve();
    // Nothing more will come: the session ends when its calls have drained.
    return new Promise<string>(() => undefined);
  }

  abort(reason: unknown): void {
    this.#allRead.reject(reason);
  }

  /** The answers, one message a line, as capnweb's batch client reads them. */
  body(): string {
    return this.#answers.join("\n");
  }
}
