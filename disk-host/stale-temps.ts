import { readdir } from "node:fs/promises";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import { DirChain, heldPath, inDir, OPEN_NOFOLLOW } from "./beneath.ts";
import { errnoOf } from "./fs-errors.ts";
import type { HostContext } from "./host-context.ts";
import { identity, META_DIR_NAME, TEMP_PREFIX } from "./meta-store.ts";
import { type FileHandle, open, rmdir, unlink } from "./sync-fs.ts";

/**
 * Deeper trees are left alone: a bound on the sweep (each level holds a
 * folder open), not a rule of the vault. Paths of at most 1,024 bytes make no
 * tree deeper than 512 levels; a deeper one was made around the vault.
 */
const MAX_DEPTH = 600;

/** What a sweep found: the identities of the live files, and whether it saw every folder. */
interface Found {
  live: Set<string>;
  complete: boolean;
}

/**
 * Removes what a crash (SIGKILL mid-write) leaves behind: `.capvault-tmp-*`
 * files anywhere under the base folder, the folders that only held them, and
 * sidecars whose file no longer exists. Temps of writes still in flight in
 * this process are kept. Links are never followed. Run it at start, before
 * serving; it reads the whole base folder.
 */
export async function cleanStaleTemps(ctx: HostContext): Promise<void> {
  const since = Date.now();
  const found: Found = { live: new Set(), complete: true };
  await sweep(ctx, DirChain.beneath(ctx.base), found, 0);
  // A sidecar is an orphan only if no file anywhere has its identity: past the
  // bound some files went unseen, and their sidecars (content type, hashes) stay.
  if (found.complete) await ctx.meta.collectOrphans(found.live, since);
}

/** Sweeps `chain.top`; true if it removed a temp (or a folder left empty by one) there. */
async function sweep(ctx: HostContext, chain: DirChain, found: Found, depth: number): Promise<boolean> {
  let removedTemp = false;
  for (const raw of await readdir(heldPath(chain.top), { encoding: "buffer" })) {
    const name = decodeUtf8Strict(raw);
    if (name === null) continue; // the vault never names anything this way
    if (depth === 0 && name === META_DIR_NAME) continue; // its own sweep: collectOrphans
    const stale = name.startsWith(TEMP_PREFIX) && !ctx.inFlight.has(name);
    let handle: FileHandle;
    try {
      handle = await open(inDir(chain.top, name), OPEN_NOFOLLOW);
    } catch (error) {
      if (errnoOf(error) === "ELOOP" && stale) removedTemp = (await removeName(chain.top, name)) || removedTemp;
      continue;
    }
    const stat = await handle.stat({ bigint: true }).catch(() => null);
    if (stat?.isDirectory() && depth >= MAX_DEPTH) found.complete = false;
    if (stat?.isDirectory() && depth < MAX_DEPTH) {
      chain.push(handle, name, true);
      const emptied = await sweep(ctx, chain, found, depth + 1);
      await chain.pop();
      // A crash can leave a folder that only ever held the temp; unmarked, it
      // exists only through what it holds (a kept one's marker stops rmdir).
      if (
        emptied &&
        (await rmdir(inDir(chain.top, name)).then(
          () => true,
          () => false,
        ))
      )
        removedTemp = true;
      continue;
    }
    await handle.close();
    if (!stat?.isFile()) continue;
    if (stale) removedTemp = (await removeName(chain.top, name)) || removedTemp;
    else found.live.add(identity(stat));
  }
  return removedTemp;
}

async function removeName(dir: FileHandle, name: string): Promise<boolean> {
  return unlink(inDir(dir, name)).then(
    () => true,
    () => false,
  );
}
