import { type CapFailure, failed, ok, type Result } from "../shared/result.ts";
import type { FolderCount } from "../shared/wire-types.ts";
import { yieldTurn } from "../shared/yield-turn.ts";
import type { CapStub } from "./cap-stub.ts";

/**
 * Whole folders deleted, copied or moved through a cap, entry by entry: each
 * step is the single-file (or single-folder) call on the cap's object, so it
 * is authorized, audited, versioned, counted in quotas and seen by watchers
 * exactly as that call would be, and a revocation stops the walk at its next
 * step. Storage has no atomic multi-object operation (R2), so every walk is
 * bounded and done before the first change: a tree over the bound changes nothing.
 */

/** The most entries (files and folders) one operation walks, and what it answers past them. */
export interface TreeBound {
  limit: number;
  tooLarge: CapFailure;
}

export interface Tree {
  /** Folders, parents before children (the walked folder first). */
  dirs: string[];
  files: string[];
}

/** Entries per listing call: a page is one synchronous step of the cap's object, so pages stay small. */
const PAGE = "250";

export const joinPath = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

/** Every entry below `root` (a canonical folder path), one listing page at a time, refused past the bound. */
export async function walkTree(cap: CapStub, root: string, bound: TreeBound): Promise<Result<Tree>> {
  const tree: Tree = { dirs: [root], files: [] };
  for (let i = 0; i < tree.dirs.length; i++) {
    const dir = tree.dirs[i]!;
    let cursor: string | null = null;
    do {
      // A walk is a chain of in-process calls to the cap's object: each takes a turn, or it holds the thread.
      await yieldTurn();
      const page = await cap.listDir(dir, cursor, PAGE, null);
      if (!page.ok) return page;
      for (const entry of page.value.entries) {
        const name = joinPath(dir, entry.name);
        if (entry.type === "dir") tree.dirs.push(name);
        else tree.files.push(name);
        if (tree.dirs.length - 1 + tree.files.length > bound.limit) return failed(bound.tooLarge);
      }
      cursor = page.value.cursor;
    } while (cursor !== null);
  }
  return ok(tree);
}

/**
 * A link to a folder (disk) lists as a folder, but the cap's one-entry move
 * and delete act on the link itself, as `mv` and `rm` do. So each subfolder
 * of the walk is first offered to `step` as one entry: taken, it was a link,
 * and what the walk saw through it is dropped (else the operation would move
 * or delete the files of a folder it never named); refused as a folder
 * (`isFolder`), it stays in the tree, done entry by entry.
 */
export async function takeLinks(
  tree: Tree,
  step: (dir: string) => Promise<Result<null>>,
  isFolder: (refused: Result<null>) => boolean,
): Promise<Result<{ tree: Tree; links: number }>> {
  const taken: string[] = [];
  let links = 0;
  const below = (path: string) => taken.some((t) => path === t || path.startsWith(`${t}/`));
  // Parents come before children, so a link's own subfolders are skipped, never offered.
  for (const dir of tree.dirs.slice(1)) {
    if (below(dir)) continue;
    await yieldTurn();
    const result = await step(dir);
    // not_found: an empty folder (disk) or one gone meanwhile; the walk's steps already allow for either.
    if (!result.ok && (isFolder(result) || result.error.code === "not_found")) continue;
    if (!result.ok) return result;
    taken.push(dir);
    links++;
  }
  if (taken.length === 0) return ok({ tree, links });
  return ok({ tree: { dirs: tree.dirs.filter((d) => !below(d)), files: tree.files.filter((f) => !below(f)) }, links });
}

/** Runs before the file step `index` in place of its turn: tests revoke a cap there, mid-operation. */
export type StepHook = (index: number) => Promise<void>;

/** What a folder operation did: the files and folders it deleted or moved. */
export type TreeCount = FolderCount;

/**
 * Deletes a walked tree: files first, then folders deepest first; the cap's
 * root itself is never removed. An entry already gone counts as done, so an
 * operation cut short (a revocation, storage failing) is finished by asking again.
 */
export async function removeTree(cap: CapStub, tree: Tree, onStep?: StepHook): Promise<Result<TreeCount>> {
  const done: TreeCount = { files: 0, folders: 0 };
  for (const [i, file] of tree.files.entries()) {
    await (onStep ? onStep(i) : yieldTurn());
    const gone = await cap.deleteFile(file);
    if (!gone.ok && gone.error.code !== "not_found") return gone;
    if (gone.ok) done.files++;
  }
  for (const dir of tree.dirs.slice().reverse()) {
    if (dir === "") continue;
    await yieldTurn();
    const gone = await cap.removeFolder(dir);
    if (!gone.ok && gone.error.code !== "not_found") return gone;
    if (gone.ok) done.folders++;
  }
  return ok(done);
}

/**
 * Copies or moves a walked tree from `from` to `to`: its folders made, then
 * each file passed to `step`, then (for a move) the emptied source folders
 * removed, deepest first. Not atomic: a failure leaves each file either
 * still at its source or at its destination, never both lost.
 */
export async function transferTree(
  cap: CapStub,
  tree: Tree,
  from: string,
  to: string,
  move: boolean,
  step: (source: string, destination: string) => Promise<Result<null>>,
  onStep?: StepHook,
): Promise<Result<TreeCount>> {
  const rebased = (path: string) => to + path.slice(from.length);
  const done: TreeCount = { files: 0, folders: 0 };
  for (const dir of tree.dirs) {
    await yieldTurn();
    const made = await cap.makeFolder(rebased(dir));
    if (!made.ok) return made;
  }
  for (const [i, file] of tree.files.entries()) {
    await (onStep ? onStep(i) : yieldTurn());
    const moved = await step(file, rebased(file));
    if (!moved.ok) return moved;
    done.files++;
  }
  if (move) {
    for (const dir of tree.dirs.slice().reverse()) {
      await yieldTurn();
      const gone = await cap.removeFolder(dir);
      if (!gone.ok && gone.error.code !== "not_found") return gone;
      if (gone.ok) done.folders++;
    }
  }
  return ok(done);
}
