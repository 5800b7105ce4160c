import { refuse } from "../shared/refusals.ts";
import { isListableName } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import { compareUtf8 } from "../shared/utf8-order.ts";
import type { ListEntry } from "../shared/wire-types.ts";
import type { CheckedDir } from "./checked-path.ts";
import type { LaterFolders, R2Folders } from "./r2-folders.ts";
import { fileEntry, type ListOptions, R2_PAGE, WITH_HASH } from "./r2-objects.ts";
import type { StorageListOptions, StorageListPage } from "./storage-adapter.ts";
import { isListablePath, TREE_WALK_BUDGET, TreePage } from "./tree-page.ts";

/** Lists one recursive page may make: the walk budget in pages of 1,000, and one spare for short pages. */
export const TREE_LIST_CALLS = Math.ceil(TREE_WALK_BUDGET / R2_PAGE) + 1;

/** A folder's listing over R2's keys: one level by name (folders from delimited prefixes), or a recursive page. */
export class R2Listing {
  constructor(
    private readonly bucket: R2Bucket,
    private readonly folders: R2Folders,
  ) {}

  async list(at: CheckedDir, options: StorageListOptions): Promise<Result<StorageListPage>> {
    const { path, key: dir } = at;
    if (path.segments.length > 0 && options.after === null) {
      const [head, isDir] = await Promise.all([this.bucket.head(dir.slice(0, -1)), this.folders.isDir(dir)]);
      if (head) return refuse("isFile");
      if (!isDir) return refuse("notFound");
    }
    if (options.depth !== undefined && options.depth !== 1) return ok(await this.listTree(at, options));
    const collected: ListEntry[] = [];
    const seen = new Set<string>();
    const atCapRoot = path.segments.length === 0;
    let cursor: string | undefined;
    // Resume after the last name by key order. A directory `d` reappears as
    // the delimited prefix `d/` (its keys sort after `d`); the name filter
    // below drops it, so every directory is listed exactly once.
    const startAfter = options.after === null ? undefined : dir + options.after;
    let later: LaterFolders | undefined;
    for (;;) {
      const listing: ListOptions = {
        prefix: dir,
        delimiter: "/",
        limit: R2_PAGE,
        include: WITH_HASH,
        ...(cursor ? { cursor } : startAfter ? { startAfter } : {}),
      };
      const page = await this.bucket.list(listing);
      for (const object of page.objects) {
        const name = object.key.slice(dir.length);
        if (accept(name, options.after, seen, atCapRoot)) collected.push(fileEntry(name, object));
      }
      for (const prefix of page.delimitedPrefixes) {
        const name = prefix.slice(dir.length, -1);
        if (accept(name, options.after, seen, atCapRoot)) collected.push({ name, type: "dir" });
      }
      if (!page.truncated) break;
      if (collected.length > options.limit) {
        // The last key of this page, in R2's (UTF-8) order.
        const lastKey = [page.objects.at(-1)?.key ?? "", page.delimitedPrefixes.at(-1) ?? ""].sort(compareUtf8)[1]!;
        later = await this.folders.foldersListedLater(
          dir,
          lastKey,
          (name) =>
            isListableName(name, atCapRoot) &&
            !seen.has(name) &&
            (options.after === null || compareUtf8(name, options.after) > 0),
        );
        for (const name of later.folders)
          if (accept(name, options.after, seen, atCapRoot)) collected.push({ name, type: "dir" });
        break;
      }
      cursor = page.cursor;
    }
    collected.sort((a, b) => compareUtf8(a.name, b.name));
    // Past the first unchecked candidate, an unseen folder may still sort in: the page ends before it.
    const cut = later?.unchecked;
    const known = cut === undefined ? collected : collected.filter((entry) => compareUtf8(entry.name, cut) < 0);
    const entries = known.slice(0, options.limit);
    if (known.length <= options.limit && cut === undefined) return ok({ entries, next: null });
    // An empty page still moves on: every name up to the last candidate checked is known.
    return ok({ entries, next: entries.at(-1)?.name ?? later!.lastChecked! });
  }

  /**
   * A recursive page: without a delimiter R2 lists every key below the folder
   * in UTF-8 order, which is the order the page needs. At most
   * {@link TREE_LIST_CALLS} lists, however the walk budget falls.
   */
  async listTree(at: CheckedDir, options: StorageListOptions): Promise<StorageListPage> {
    const dir = at.key;
    const atCapRoot = at.path.segments.length === 0;
    const page = new TreePage(options.depth ?? 0, options.limit, options.after);
    let cursor: string | undefined;
    const startAfter = options.after === null ? undefined : dir + options.after;
    for (let call = 0; call < TREE_LIST_CALLS; call++) {
      const listing: ListOptions = {
        prefix: dir,
        limit: R2_PAGE,
        include: WITH_HASH,
        ...(cursor ? { cursor } : startAfter ? { startAfter } : {}),
      };
      const listed = await this.bucket.list(listing);
      for (const object of listed.objects) {
        const name = object.key.slice(dir.length);
        // "" is the folder's own marker (r2-folders.ts), no entry of it.
        const step = name !== "" && isListablePath(name, atCapRoot) ? page.next(name) : page.skip(name);
        if (step === "stop") return page.finish(false);
        if (step === "file") page.addFile(fileEntry(name, object));
      }
      if (!listed.truncated) return page.finish(true);
      cursor = listed.cursor;
    }
    return page.finish(false);
  }
}

/** Keeps only names a cap could address (keys written around the vault may not be), each once. */
function accept(name: string, after: string | null, seen: Set<string>, atCapRoot: boolean): boolean {
  if (seen.has(name)) return false;
  if (after !== null && compareUtf8(name, after) <= 0) return false;
  if (!isListableName(name, atCapRoot)) return false;
  seen.add(name);
  return true;
}
