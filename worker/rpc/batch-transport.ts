import type { RpcTransport } from "capnweb";

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

  receive(): Promise<string> {
    const next = this.#received.shift();
    if (next !== undefined) return Promise.resolve(next);
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
