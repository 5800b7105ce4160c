/** Tables the runtime keeps in every object's database (`_cf_KV`, `_cf_METADATA`) and SQLite's own. */
export const INTERNAL_TABLE = /^(_cf_|sqlite_)/;

/**
 * Whether this object's storage holds nothing but `keys` (any of them may be
 * absent) and the tables `tables`: no other key-value entry and no other SQL
 * table. Revocation uses it to tell a cap whose kill leaves nothing behind
 * from one with state left to clear. It looks at both stores as a whole, so
 * state that code added later keeps somewhere (a new key, a new table) is
 * never mistaken for nothing: such a cap takes the revocation path that
 * clears everything.
 */
export async function holdsOnly(
  storage: DurableObjectStorage,
  keys: readonly string[],
  tables: readonly string[],
): Promise<boolean> {
  // One entry more than `keys` can hold is enough to see a stranger.
  const held = await storage.list({ limit: keys.length + 1 });
  for (const key of held.keys()) if (!keys.includes(key)) return false;
  const names = storage.sql
    .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
    .toArray()
    .map((row) => row.name);
  return names.every((name) => INTERNAL_TABLE.test(name) || tables.includes(name));
}
