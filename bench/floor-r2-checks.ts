/**
 * The R2 calls the vault makes before a write (r2-storage.ts `write`), all
 * at once: a head of each ancestor of the key (a file may not sit where a
 * folder is needed; r2-folders.ts heads up to 8 at once), a one-key list
 * under the key (no folder in its place), and a head of the key (its
 * current version, for the preconditions and the answer's `created`).
 * `head` makes only the last: what an overwrite of a key known to exist needs.
 */
export type WriteChecks = "all" | "head";

export function parseChecks(raw: string | null): WriteChecks | null {
  return raw === "1" ? "all" : raw === "head" ? "head" : null;
}

export async function checkBeforeWrite(bucket: R2Bucket, key: string, checks: WriteChecks): Promise<void> {
  if (checks === "head") {
    await bucket.head(key);
    return;
  }
  const ancestors: string[] = [];
  for (let i = key.indexOf("/"); i >= 0; i = key.indexOf("/", i + 1)) ancestors.push(key.slice(0, i));
  await Promise.all([
    Promise.all(ancestors.map((ancestor) => bucket.head(ancestor))),
    bucket.list({ prefix: `${key}/`, limit: 1 }),
    bucket.head(key),
  ]);
}
