import { parseRelPath } from "../shared/rel-path.ts";
import type { ListEntry } from "../shared/wire-types.ts";
import type { StorageListPage } from "./storage-adapter.ts";

/**
 * Files one recursive page may walk, shown or folded into a folder entry.
 * Why a bound and not "until the page is full": with `depth`, a folder of a
 * million files is one entry, and skipping its files must not be one
 * request's work. A page that reaches the bound ends early (possibly empty)
 * with a cursor; every backend counts the same files, so they page alike.
 */
export const TREE_WALK_BUDGET = 4000;
/** The deepest `depth` worth asking for: a key of 1,024 bytes has at most 512 segments. */
export const MAX_DEPTH = 512;

/**
 * Builds one page of a recursive listing from the files below the listed
 * folder, offered in UTF-8 byte order of their relative paths (R2's key
 * order; the disk host walks in the same order). With `depth` 0 every file
 * is an entry, named by its path (`a/b.txt`); with `depth` N a file more than
 * N levels down shows as its folder at level N, once, where its first file
 * sorts (a folder sorts as its name followed by `/`).
 *
 * The cursor is the last file walked: a page resumes with the files after it,
 * so files added while a client pages appear once or (if they sort before
 * the cursor) not at all, and none is shown twice. A folder whose files
 * straddle two pages is not shown again: the cursor lies inside it.
 *
 * On disk a page can also run out of folders to enter (trees of empty
 * folders made by hand) before it walks a file. Its cursor is then the last
 * folder walked to its end, as `name/` (no file path ends in `/`): the next
 * page resumes after that folder's subtree, so every page makes progress
 * and only a finished walk says it is complete. With `depth`, one more `/`
 * (`name//`) says the folder holding it at that depth is not shown yet.
 */
export class TreePage {
  readonly entries: ListEntry[] = [];
  private walked = 0;
  private lastWalked: string | null;
  private lastFolder: string | null;
  /** The last folder walked to its end (`name/`), if no file was walked since. */
  private passed: string | null = null;
  private stopped = false;

  constructor(
    private readonly depth: number,
    private readonly limit: number,
    private readonly after: string | null,
    /** Files this page may walk; {@link TREE_WALK_BUDGET} but in tests of the bound itself. */
    private readonly budget = TREE_WALK_BUDGET,
  ) {
    this.lastWalked = after;
    this.lastFolder = after === null || after.endsWith("//") ? null : this.folderOf(after);
  }

  /**
   * The next file path, after the previous one. `"file"`: show it (the caller
   * adds its entry with {@link addFile}, or nothing if it is gone); `"folded"`:
   * walked, nothing more to do; `"stop"`: the page is done, stop walking.
   */
  next(path: string): "file" | "folded" | "stop" {
    if (this.stopped || this.walked >= this.budget) return this.stop();
    const folder = this.folderOf(path);
    const shown = folder === null || folder !== this.lastFolder;
    // Full, and one more entry exists: that is what makes a cursor.
    if (shown && this.entries.length === this.limit) return this.stop();
    this.walked++;
    this.lastWalked = path;
    this.passed = null;
    if (folder === null) return "file";
    if (shown) this.entries.push({ name: folder, type: "dir" });
    this.lastFolder = folder;
    return "folded";
  }

  /** A key no cap can name (written around the vault): walked, never shown. */
  skip(path: string): "folded" | "stop" {
    if (this.stopped || this.walked >= this.budget) return this.stop();
    this.walked++;
    this.lastWalked = path;
    this.passed = null;
    return "folded";
  }

  /** A folder (`key` is its path and `/`) whose whole subtree the walk has been through. */
  passFolder(key: string): void {
    if (!this.stopped) this.passed = key;
  }

  addFile(entry: ListEntry): void {
    this.entries.push(entry);
  }

  /** The page; `exhausted` when the walk found no file after the last one offered. */
  finish(exhausted: boolean): StorageListPage {
    const more = this.stopped || !exhausted;
    return { entries: this.entries, next: more ? this.lastWalked : null };
  }

  /**
   * The page of a walk that ran out of folders to enter: it resumes after the
   * last folder walked through when no file came after it. Never `null`: the
   * walk is not finished.
   */
  finishOutOfFolders(): StorageListPage {
    if (this.passed === null) return { entries: this.entries, next: this.lastWalked };
    // A folder at `depth` holding the mark and not shown yet must be shown with its first file: say so.
    const holder = this.folderOf(this.passed);
    const unshown = holder !== null && holder !== this.lastFolder;
    return { entries: this.entries, next: unshown ? `${this.passed}/` : this.passed };
  }

  /** Whether the walk got past where the page started: only then may it stop for want of folders. */
  madeProgress(): boolean {
    return this.passed !== null || this.lastWalked !== this.after;
  }

  private stop(): "stop" {
    this.stopped = true;
    return "stop";
  }

  /** The folder at `depth` holding `path`, or `null` when the file itself is shown. */
  private folderOf(path: string): string | null {
    if (this.depth === 0) return null;
    let at = -1;
    for (let level = 0; level < this.depth; level++) {
      at = path.indexOf("/", at + 1);
      if (at < 0) return null;
    }
    return path.slice(0, at);
  }
}

/** Where a recursive page resumes: the cursor, without the not-shown mark of a folder cursor. */
export function resumeAfter(after: string | null): string | null {
  return after?.endsWith("//") ? after.slice(0, -1) : after;
}

/** Whether a cap could name `path` below the listed folder (at the cap's root, `~x` or `c:` could not). */
export function isListablePath(path: string, atCapRoot: boolean): boolean {
  const parsed = parseRelPath(atCapRoot ? path : `x/${path}`);
  return parsed.ok && parsed.value.segments.slice(atCapRoot ? 0 : 1).join("/") === path;
}
