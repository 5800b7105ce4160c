/** Ancestors of a key headed all at once; deeper keys are searched (see anyAncestorIsFile). */
const DIRECT_ANCESTOR_HEADS = 8;
/** Folders looked up when a listing page is cut (see foldersListedLater). */
const LATER_FOLDER_CHECKS = 24;
/** A binary search over at most 512 ancestors (10 lists) and one head. */
export const ANCESTOR_CALLS_MAX = 11;

export interface LaterFolders {
  folders: string[];
  /** The first candidate not looked up, if any: names from it on are not known to be complete. */
  unchecked: string | undefined;
  lastChecked: string | undefined;
}

/**
 * R2 has no folders, only keys: a folder is a prefix some key holds (a file,
 * or the folder's marker: a zero-byte key `dir/` that makeDir puts). These
 * are the questions about folders the adapter asks, each at a bounded
 * number of R2 calls.
 */
export class R2Folders {
  constructor(private readonly bucket: R2Bucket) {}

  /**
   * Keeps the folder holding `key` once `key` goes: a zero-byte marker at the
   * folder's own key (`dir/`), which lists as no name, so the folder stays
   * until removed explicitly, as on disk. Nothing at the bucket's top.
   */
  async keepParentOf(key: string): Promise<void> {
    const slash = key.slice(0, -1).lastIndexOf("/");
    if (slash >= 0) await this.bucket.put(key.slice(0, slash + 1), new Uint8Array(0));
  }

  /** Whether some key lies under the folder `dirKey` (ending in `/`). */
  async isDir(dirKey: string): Promise<boolean> {
    const page = await this.bucket.list({ prefix: dirKey, limit: 1 });
    return page.objects.length > 0;
  }

  /**
   * Whether a file sits where a folder above `key` is needed, from the top of
   * the bucket: the cap's own root levels included, as the disk finds them on
   * its way down. (Checking only the path below the root let R2 write `x/f`
   * for a child cap whose root `x` had since become a file; disk refused.)
   *
   * At most {@link ANCESTOR_CALLS_MAX} R2 calls, however deep the key: a key
   * of 1,024 bytes can have 512 ancestors, and a head for each would pass
   * Cloudflare's per-request subrequest limit (50 on the Free plan).
   * Shallow keys head every ancestor at once. Deeper ones rest on what the
   * adapter keeps true (a file never sits where a folder holds keys): the
   * folders holding keys form an unbroken run from the top (a key under
   * `a/b/` is under `a/` too), so a binary search with one-key lists finds
   * the deepest, and only the ancestor just below it can be a file.
   */
  async anyAncestorIsFile(key: string): Promise<boolean> {
    const ancestors: string[] = [];
    for (let i = key.indexOf("/"); i >= 0; i = key.indexOf("/", i + 1)) ancestors.push(key.slice(0, i));
    if (ancestors.length <= DIRECT_ANCESTOR_HEADS) {
      const heads = await Promise.all(ancestors.map((ancestor) => this.bucket.head(ancestor)));
      return heads.some((head) => head !== null);
    }
    // Invariant: ancestors[0 .. holding) hold keys; ancestors[below ..] do not.
    let holding = 0;
    let below = ancestors.length;
    while (holding < below) {
      const mid = (holding + below) >> 1;
      if (await this.isDir(`${ancestors[mid]}/`)) holding = mid + 1;
      else below = mid;
    }
    return holding < ancestors.length && (await this.bucket.head(ancestors[holding]!)) !== null;
  }

  /**
   * Folders that R2 lists after `lastKey` but that sort by name before names
   * already collected. The folder `d` is the key prefix `d/`, which comes after
   * `d!x`, `d.x` and every other `d` + a byte below `/`; so when a page is cut
   * after such keys, `d` may still be unseen though its name sorts first, and
   * resuming after a later name would skip it for good. Only a prefix of the
   * last key seen that is followed there by a byte below `/` can be such a
   * folder (any other unseen name sorts after the last key), so those are
   * looked up: at most {@link LATER_FOLDER_CHECKS} of them, shortest (first
   * by name) first. A name like `x-------…` has hundreds; `unchecked` is then
   * the first one left, and the page must end before it.
   */
  async foldersListedLater(dirKey: string, lastKey: string, wanted: (name: string) => boolean): Promise<LaterFolders> {
    const rest = lastKey.slice(dirKey.length).replace(/\/$/, "");
    const candidates: string[] = [];
    for (let i = 1; i < rest.length; i++)
      if (rest.charCodeAt(i) < 0x2f && wanted(rest.slice(0, i))) candidates.push(rest.slice(0, i));
    const checked = candidates.slice(0, LATER_FOLDER_CHECKS);
    const found = await Promise.all(
      checked.map(async (name) => ((await this.isDir(`${dirKey}${name}/`)) ? name : null)),
    );
    return {
      folders: found.filter((name) => name !== null),
      unchecked: candidates[LATER_FOLDER_CHECKS],
      lastChecked: checked.at(-1),
    };
  }
}
