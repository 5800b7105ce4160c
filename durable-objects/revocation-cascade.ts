import type { Result } from "../shared/result.ts";
import type { CapRef } from "./cap-record.ts";
import { CHILD, chunks } from "./child-index.ts";

/** Child records read per step: a cascade never holds more of them at once. */
const BATCH = 100;
/** Child revocations in flight at once, so one revocation cannot flood the runtime with calls. */
const FANOUT = 8;

export type RevokeOne = (ref: CapRef) => Promise<Result<{ pending: number }>>;

/**
 * Revokes every child a dead cap still records, a batch at a time with
 * bounded fan-out, and forgets each one once its subtree is revoked. A child
 * that cannot be reached keeps its record, for the alarm to retry. Returns the
 * number of descendants not yet revoked.
 */
export async function revokeChildren(storage: DurableObjectStorage, revokeOne: RevokeOne): Promise<number> {
  let pending = 0;
  let startAfter: string | undefined;
  for (;;) {
    const batch = [
      ...(await storage.list<CapRef>({ prefix: CHILD, limit: BATCH, ...(startAfter ? { startAfter } : {}) })),
    ];
    if (batch.length === 0) return pending;
    startAfter = batch[batch.length - 1]![0];
    const done: string[] = [];
    await forEachBounded(batch, FANOUT, async ([key, ref]) => {
      const outcome = await revokeOne(ref).catch(() => null);
      if (outcome?.ok) {
        done.push(key);
        pending += outcome.value.pending;
      } else {
        pending += 1;
      }
    });
    for (const keys of chunks(done, 128)) await storage.delete(keys);
    if (batch.length < BATCH) return pending;
  }
}

async function forEachBounded<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await run(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
