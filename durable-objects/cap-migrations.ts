import { splitLegacyAudit } from "./audit-log.ts";
import type { ChildRecord } from "./cap-record.ts";
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
    what: "the audit log's split table, and the children's count and creation-order index",
    up(storage) {
      splitLegacyAudit(storage.sql);
      indexLegacyChildren(storage.kv);
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
