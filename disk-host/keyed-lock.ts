/**
 * Serialises async sections per key inside this one Node process. The disk
 * host uses it so that checking a write's precondition and renaming the new
 * file into place happen as one step for every vault writer of that file.
 *
 * @example
 * const locks = new KeyedLock();
 * await locks.run(["dev:ino/name"], async () => { check(); await rename(); });
 */
export class KeyedLock {
  private readonly tails = new Map<string, Promise<void>>();

  /** Runs `section` holding every key; keys are taken in sorted order so two callers cannot deadlock. */
  async run<T>(keys: readonly string[], section: () => Promise<T>): Promise<T> {
    const releases: (() => void)[] = [];
    try {
      for (const key of [...new Set(keys)].sort()) releases.push(await this.acquire(key));
      return await section();
    } finally {
      for (const release of releases.reverse()) release();
    }
  }

  private async acquire(key: string): Promise<() => void> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    return () => {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
  }
}
