/**
 * Recursive listing on disk: a depth-first walk of real folders that yields
 * files in the UTF-8 byte order of their paths below the listed folder, the
 * order R2 lists keys in, so both backends page identically (tree-page.ts).
 * A folder's files all start with `name/`, so visiting each folder's
 * children sorted by `name` for a file and `name/` for a folder gives exactly
 * that order.
 *
 * Links are not followed, not even within the root: a walk that followed
 * them could loop (a link to an ancestor) or show one file under many names.
 * Every name is opened beneath the folder held (beneath.ts), never by path.
 */
import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import { isListableName, MAX_KEY_BYTES, utf8Length } from "../shared/rel-path.ts";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import { compareUtf8 } from "../shared/utf8-order.ts";
import type { ListEntry } from "../shared/wire-types.ts";
import type { StorageListOptions, StorageListPage } from "../storage-adapters/storage-adapter.ts";
import { resumeAfter, TreePage } from "../storage-adapters/tree-page.ts";
import { closeEnd, type DirChain, heldPath, walk } from "./beneath.ts";
import { MAX_TREE_DEPTH } from "./dir-visibility.ts";
import type { HostContext } from "./host-context.ts";
import { modifiedIso } from "./meta-store.ts";

/**
 * Folders one page may enter. Files are bounded by the page's walk budget;
 * this bounds the folders around them, which only matters for trees of
 * empty folders made by hand (the vault removes the folders it empties).
 * A page stops for it only once it got past its cursor (a file or a folder
 * walked through, tree-page.ts), so no page repeats its cursor. That comes
 * within twice the deepest walk (re-entering the cursor's folders, then
 * down to a leaf), and folders are walked only while their path is shorter
 * than a key (below), so at most about 1,024 folders past the budget.
 */
export const FOLDER_BUDGET = 4000;

interface Walk {
  ctx: HostContext;
  page: TreePage;
  after: string | null;
  folders: number;
  outOfFolders: boolean;
}

export async function treePage(
  ctx: HostContext,
  chain: DirChain,
  options: StorageListOptions,
  atCapRoot: boolean,
): Promise<StorageListPage> {
  const run: Walk = {
    ctx,
    page: new TreePage(options.depth ?? 0, options.limit, options.after, ctx.walkBudget.files),
    after: resumeAfter(options.after),
    folders: 0,
    outOfFolders: false,
  };
  const finished = await walkFolder(run, chain, "", atCapRoot, 0);
  return run.outOfFolders ? run.page.finishOutOfFolders() : run.page.finish(finished);
}

/** Walks the folder `chain.top`, at `prefix` below the listed one; `false` when the page stopped. */
async function walkFolder(
  run: Walk,
  chain: DirChain,
  prefix: string,
  atCapRoot: boolean,
  level: number,
): Promise<boolean> {
  if (++run.folders > run.ctx.walkBudget.folders && run.page.madeProgress()) {
    run.outOfFolders = true;
    return false;
  }
  for (const child of await orderedChildren(chain.top, atCapRoot)) {
    const path = prefix + child.name;
    if (child.folder) {
      const key = `${path}/`;
      if (walkedThrough(key, run.after)) continue;
      // Every file in it has a path longer than a key: no cap could name it.
      if (level >= MAX_TREE_DEPTH || utf8Length(key) >= MAX_KEY_BYTES) continue;
      const end = await walk(chain, [{ name: child.name, fromLink: false }], { followFinal: false });
      if (!end.ok) continue;
      try {
        if (end.value.kind === "dir") {
          if (!(await walkFolder(run, end.value.chain, key, false, level + 1))) return false;
          run.page.passFolder(key);
        }
      } finally {
        await closeEnd(end.value);
      }
      continue;
    }
    if (run.after !== null && (compareUtf8(path, run.after) <= 0 || insideWalked(path, run.after))) continue;
    const step = run.page.next(path);
    if (step === "stop") return false;
    if (step === "file") {
      const entry = await describeFile(run.ctx, chain, child.name, path);
      if (entry) run.page.addFile(entry);
    }
  }
  return true;
}

/**
 * Whether the folder `key` (`name/`) is wholly behind the cursor: before it
 * (every path in it starts with `key`, and the cursor sorts after all of
 * them), or inside a folder the cursor says was walked through.
 */
function walkedThrough(key: string, after: string | null): boolean {
  if (after === null) return false;
  return (compareUtf8(key, after) < 0 && !after.startsWith(key)) || insideWalked(key, after);
}

/** A cursor ending in `/` is a folder walked through (no file path ends so): everything below it is behind. */
function insideWalked(path: string, after: string): boolean {
  return after.endsWith("/") && path.startsWith(after);
}

interface Child {
  name: string;
  folder: boolean;
}

/** Files and folders (no links, no special files) a cap could name, in walk order. */
async function orderedChildren(dir: DirChain["top"], atCapRoot: boolean): Promise<Child[]> {
  const entries: Dirent<Buffer>[] = await readdir(heldPath(dir), { withFileTypes: true, encoding: "buffer" });
  const children: (Child & { key: string })[] = [];
  for (const entry of entries) {
    if (!entry.isFile() && !entry.isDirectory()) continue;
    const name = decodeUtf8Strict(entry.name);
    if (name === null || !isListableName(name, atCapRoot)) continue;
    const folder = entry.isDirectory();
    children.push({ name, folder, key: folder ? `${name}/` : name });
  }
  return children.sort((a, b) => compareUtf8(a.key, b.key));
}

async function describeFile(ctx: HostContext, chain: DirChain, name: string, path: string): Promise<ListEntry | null> {
  const end = await walk(chain, [{ name, fromLink: false }], { followFinal: false });
  if (!end.ok) return null;
  try {
    if (end.value.kind !== "file") return null;
    const { file, stat } = end.value;
    const { etag, sha256 } = await ctx.meta.validatorsOf(file, stat);
    return { name: path, type: "file", size: Number(stat.size), etag, sha256, modified: modifiedIso(stat) };
  } finally {
    await closeEnd(end.value);
  }
}
