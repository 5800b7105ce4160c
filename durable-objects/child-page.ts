import { ok, type Result } from "../shared/result.ts";
import type { ChildPage, ChildView } from "../shared/wire-types.ts";
import { type ChildRecord, isoOrNull } from "./cap-record.ts";
import { CHILD, CHILD_AT, countChildren } from "./child-index.ts";
import { decodeCursor, encodeCursor, parseLimit } from "./list-cursor.ts";

const READ_BATCH = 128;

/**
 * One page of a cap's live children in creation order. The cursor is the last
 * index key returned, opaque like a list cursor: a forged one can only start
 * the listing elsewhere among this cap's own children. Expired children are
 * skipped; the scan is bounded by the records the cap holds (see MAX_CHILDREN).
 */
export async function childPage(
  storage: DurableObjectStorage,
  rawCursor: string | null,
  rawLimit: string | null,
): Promise<Result<ChildPage>> {
  const limit = parseLimit(rawLimit);
  if (!limit.ok) return limit;
  const after = decodeCursor(rawCursor);
  if (!after.ok) return after;
  await countChildren(storage); // builds the ordered index for state older than it

  const now = Date.now();
  const page: ChildRecord[] = [];
  let startAfter = after.value === null ? undefined : CHILD_AT + after.value;
  let lastKey = "";
  for (;;) {
    const index = [
      ...(await storage.list<string>({ prefix: CHILD_AT, limit: READ_BATCH, ...(startAfter ? { startAfter } : {}) })),
    ];
    if (index.length === 0) return ok({ children: page.map(view), cursor: null });
    const records = await storage.get<ChildRecord>(index.map(([, id]) => CHILD + id));
    for (const [key, id] of index) {
      const child = records.get(CHILD + id);
      if (!child || (child.expiresAt !== null && child.expiresAt <= now)) continue;
      // One more live child after a full page: there is a next page.
      if (page.length === limit.value)
        return ok({ children: page.map(view), cursor: encodeCursor(lastKey.slice(CHILD_AT.length)) });
      page.push(child);
      lastKey = key;
    }
    if (index.length < READ_BATCH) return ok({ children: page.map(view), cursor: null });
    startAfter = index[index.length - 1]![0];
  }
}

function view(c: ChildRecord): ChildView {
  return {
    id: c.id,
    label: c.label,
    path: c.path,
    rights: c.rights,
    createdAt: new Date(c.createdAt).toISOString(),
    expiresAt: isoOrNull(c.expiresAt),
  };
}
