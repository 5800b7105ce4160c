import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { ChildRecord } from "./cap-record.ts";

/** A child's record, by id: what revocation and `DELETE /children/<id>` look up. */
export const CHILD = "child:";
/** The same children in creation order (`childAt:<createdAt>:<id>` → id), for paged listing. */
export const CHILD_AT = "childAt:";
/** How many child records this cap holds; it stays (at 0) once they are all forgotten. */
export const CHILD_COUNT = "childCount";

/**
 * Live children one cap may hold. It bounds what one revocation step has to
 * reach and what `GET /children` can return, and it matches the largest list
 * page, so a client that ignores the cursor still sees every live child.
 * Deeper trees stay possible: each child has its own allowance, and every cap
 * in a tree was one mint request, so revoking it is linear in what was asked.
 */
export const MAX_CHILDREN = 1000;

export const orderKey = (child: { createdAt: number; id: string }) =>
  `${CHILD_AT}${String(child.createdAt).padStart(16, "0")}:${child.id}`;

/**
 * Records a new child, or refuses when the cap already holds MAX_CHILDREN
 * live ones. Storage calls only, so no other request interleaves between the
 * count and the write (the input gate stays shut).
 */
export async function addChild(storage: DurableObjectStorage, child: ChildRecord): Promise<Result<null>> {
  let count = await countChildren(storage);
  if (count >= MAX_CHILDREN) count = await pruneExpired(storage, Date.now());
  if (count >= MAX_CHILDREN) {
    return refuse("tooManyChildren", { limit: MAX_CHILDREN });
  }
  await storage.put({ [CHILD + child.id]: child, [orderKey(child)]: child.id, [CHILD_COUNT]: count + 1 });
  return ok(null);
}

/** Forgets a child; the count changes only if it was there, so two forgets never count twice. */
export async function removeChild(storage: DurableObjectStorage, id: string): Promise<void> {
  const child = await storage.get<ChildRecord>(CHILD + id);
  if (!child) return;
  const count = await storage.get<number>(CHILD_COUNT);
  await storage.delete([CHILD + id, orderKey(child)]);
  if (typeof count === "number") await storage.put(CHILD_COUNT, Math.max(0, count - 1));
}

/**
 * How many child records this cap holds, expired ones included. State written
 * before the count and the ordered index existed gets both here, once.
 */
export async function countChildren(storage: DurableObjectStorage): Promise<number> {
  const stored = await storage.get<number>(CHILD_COUNT);
  if (typeof stored === "number") return stored;
  const all = await storage.list<ChildRecord>({ prefix: CHILD });
  const index = Object.fromEntries([...all.values()].map((c) => [orderKey(c), c.id]));
  for (const batch of chunks(Object.entries(index), 128)) await storage.put(Object.fromEntries(batch));
  await storage.put(CHILD_COUNT, all.size);
  return all.size;
}

/** Drops expired children (dead by their own clock); only runs when the cap is at its limit. */
async function pruneExpired(storage: DurableObjectStorage, now: number): Promise<number> {
  const all = await storage.list<ChildRecord>({ prefix: CHILD });
  const expired = [...all.values()].filter((c) => c.expiresAt !== null && c.expiresAt <= now);
  const keys = expired.flatMap((c) => [CHILD + c.id, orderKey(c)]);
  for (const batch of chunks(keys, 128)) await storage.delete(batch);
  const count = all.size - expired.length;
  await storage.put(CHILD_COUNT, count);
  return count;
}

export function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
