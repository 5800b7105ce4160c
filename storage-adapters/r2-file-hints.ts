/**
 * Keys this isolate last saw hold a file, most recent last: a bounded,
 * insertion-ordered set, {@link FILE_HINTS_MAX} keys at most.
 *
 * Only a hint, never an authority: it picks which R2 calls a write makes
 * first (see R2Storage.write), and every decision rests on what R2 answers.
 * Shared by every cap object the isolate runs; a key is a full bucket key, so
 * one cap's hint can only speed up (or, stale, slow by one call) a write of
 * the same key, which only a cap over that folder can make.
 *
 * @example
 * const hints = new FileHints(2);
 * hints.saw("a"); hints.saw("b"); hints.saw("c");
 * hints.has("a"); // false: the oldest went first
 */
export const FILE_HINTS_MAX = 1024;

export class FileHints {
  private readonly keys = new Set<string>();

  constructor(private readonly max = FILE_HINTS_MAX) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** `key` holds a file now: kept, as the most recent. */
  saw(key: string): void {
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.max) this.keys.delete(this.keys.values().next().value as string);
  }

  /** `key` holds no file now. */
  forget(key: string): void {
    this.keys.delete(key);
  }
}
