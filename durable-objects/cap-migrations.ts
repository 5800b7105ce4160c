import { splitLegacyAudit } from "./audit-log.ts";
import { type ChildRecord, TOMBSTONE, type Tombstone } from "./cap-record.ts";
import { CHILD, CHILD_COUNT, orderKey } from "./child-index.ts";
import type { Migration } from "./state-migrations.ts";

/**
 * A cap object's migrations, run when it wakes (state-migrations.ts). Each is
 * synchronous storage work inside one transaction, bounded by what one cap
 * holds: at most 1,000 live children (child-index.ts) and 1,100 audit lines.
 */
export const CAP_MIGRATIONS: readonly Migration[] = [
  {
    to: 2,
    what: "the audit log's split table, the children's count and creation-order index, and a tombstone's pending children as child records",
    up(storage) {
      splitLegacyAudit(storage.sql);
      indexLegacyChildren(storage.kv);
      unpackLegacyTombstone(storage.kv);
    },
  },
];

/**
 * Children recorded before the count and the ordered index existed get both.
 * countChildren (child-index.ts) still does the same lazily for state that
 * reaches it unmigrated; here it happens once, before any request.
 */
function indexLegacyChildren(kv: SyncKvStorage): void {
  if (typeof kv.get(CHILD_COUNT) === "number") return;
  let count = 0;
  // Read whole before writing: no write lands in a list still being read.
  for (const [, child] of [...kv.list<ChildRecord>({ prefix: CHILD })]) {
    kv.put(orderKey(child), child.id);
    count++;
  }
  if (count > 0) kv.put(CHILD_COUNT, count);
}

/**
 * Tombstones before e437e15 listed the descendants a cascade had yet to
 * reach; since then those stay as `child:` records (the cascade's own
 * shape), which the alarm's retry walks. The cascade still unpacks an old
 * one itself (cap-revocation.ts); here it happens once, at the wake.
 */
function unpackLegacyTombstone(kv: SyncKvStorage): void {
  const tombstone = kv.get<Tombstone>(TOMBSTONE);
  if (!tombstone || tombstone.pending.length === 0) return;
  for (const ref of tombstone.pending) kv.put(CHILD + ref.id, ref);
  kv.put(TOMBSTONE, { ...tombstone, pending: [] } satisfies Tombstone);
}
