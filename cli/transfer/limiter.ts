/**
 * At most `limit` tasks at once, the rest queued in order. One limiter per
 * command bounds everything it sends (listings, transfers, deletes), so a
 * folder of 1,000 small files takes about 1,000 / limit round trips, not
 * 1,000, and never opens more connections than that.
 */
export class Limiter {
  readonly #limit: number;
  #active = 0;
  #queue: (() => void)[] = [];
  /** Highest number of tasks that ran at once (reported in --json, and counted by tests). */
  peak = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    // A finishing task hands its slot straight to the next in line, so a
    // newcomer can never slip in between and exceed the limit.
    if (this.#active >= this.#limit) await new Promise<void>((resolve) => this.#queue.push(resolve));
    else this.#active++;
    this.peak = Math.max(this.peak, this.#active);
    try {
      return await task();
    } finally {
      const next = this.#queue.shift();
      if (next) next();
      else this.#active--;
    }
  }
}
