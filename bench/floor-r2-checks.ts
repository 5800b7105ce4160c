/**
 * The R2 calls the vault makes before a write (r2-storage.ts `write`), all
 * at once: a head of each ancestor of the key (a file may not sit where a
 * folder is needed; r2-folders.ts heads up to 8 at once), a one-key list
 * under the key (no folder in its place), and a head of the key (its
 * current version, for the preconditions and the answer's `created`).
 */
export async function checkBeforeWrite(bucket: R2Bucket, key: string): Promise<void> {
  const ancestors: string[] = [];
  for (let i = key.indexOf("/"); i >= 0; i = key.indexOf("/", i + 1)) ancestors.push(key.slice(0, i));
  await Promise.all([
    Promise.all(ancestors.map((ancestor) => bucket.head(ancestor))),
    bucket.list({ prefix: `${key}/`, limit: 1 }),
    bucket.head(key),
  ]);
}
