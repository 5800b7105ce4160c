import { pathWithin } from "../durable-objects/cap-dav-locks.ts";
import { refusal, refuse } from "../shared/refusals.ts";
import { parseRelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import { yieldTurn } from "../shared/yield-turn.ts";
import type { CapStub } from "./cap-stub.ts";
import {
  removeTree,
  type StepHook,
  type Tree,
  type TreeBound,
  type TreeCount,
  takeLinks,
  transferTree,
  walkTree,
} from "./folder-tree.ts";

/**
 * The most entries (files and folders) a recursive delete or a folder move
 * walks in one request. Each entry is one call on the cap's object (a few ms
 * of the vault's CPU, one subrequest): see docs/benchmarks.md for the figure
 * this keeps well under 1 s of CPU and 100 ms of delay to other caps.
 */
export const FOLDER_OP_LIMIT = 20;

/** What tests change: a smaller bound (so a folder over it is cheap to make), and a hook before each file step. */
export interface FolderOpOptions {
  limit?: number;
  onStep?: StepHook;
}

const boundOf = (limit = FOLDER_OP_LIMIT): TreeBound => ({ limit, tooLarge: refusal("folderTooLarge", { limit }) });

/** The canonical spelling of a path the cap's object has already accepted. */
function canonical(raw: string): string {
  const parsed = parseRelPath(raw);
  return parsed.ok ? parsed.value.text : raw;
}

/**
 * Deletes a folder and everything below it (`rm -r`): `list` to walk it,
 * `delete` for each file and folder. A folder over {@link FOLDER_OP_LIMIT}
 * entries is refused whole before anything is deleted. Cut short (a
 * revocation, storage failing), what is left is still listed and asking again finishes it.
 */
export async function deleteFolderTree(
  cap: CapStub,
  rawPath: string | null,
  options: FolderOpOptions = {},
): Promise<Result<TreeCount>> {
  const stat = await cap.statPath(rawPath);
  if (!stat.ok) return stat;
  if (stat.value.type !== "dir") return refuse("isFile");
  const root = canonical(rawPath ?? "");
  if (root === "") return refuse("needsFolderName");
  // A link to a folder (disk) is removed as the link, as `rm` removes it; a folder is refused as one (R2 too).
  const link = await cap.deleteFile(root);
  if (link.ok) return ok({ files: 0, folders: 1 });
  if (!isRefused(link, "isDirectory") && link.error.code !== "not_found") return link;
  const tree = await walkTree(cap, root, boundOf(options.limit));
  if (!tree.ok) return tree;
  const pruned = await takeLinks(
    tree.value,
    (dir) => cap.deleteFile(dir),
    (refused) => isRefused(refused, "isDirectory"),
  );
  if (!pruned.ok) return pruned;
  const removed = await removeTree(cap, pruned.value.tree, options.onStep);
  return removed.ok ? ok({ ...removed.value, folders: removed.value.folders + pruned.value.links }) : removed;
}

const isRefused = (result: Result<unknown>, reason: "isDirectory" | "cannotMoveDirectory") =>
  !result.ok && result.error.message === refusal(reason).message;

/** Whether a file move was refused because its source is a folder: then it is a folder move. */
export function isFolderMoveRefusal(result: Result<unknown>): boolean {
  return isRefused(result, "cannotMoveDirectory");
}

/**
 * Moves a folder and everything below it to `to` (`write` and `delete`, as a
 * file move; `list` to walk it): each file moved as `POST /move` moves one,
 * then the emptied source folders removed. A destination folder that exists
 * is merged into, and a file of the source landing on a file there is refused
 * (before anything moves) unless `overwrite`; so a move cut short is finished
 * by sending it again. Into itself, onto an ancestor, or past the bound: refused, nothing changed.
 */
export async function moveFolderTree(
  cap: CapStub,
  rawFrom: string,
  rawTo: string,
  overwrite: boolean,
  options: FolderOpOptions = {},
): Promise<Result<TreeCount>> {
  // Both paths were accepted by the cap's object (the file move that led here), so these parse.
  const from = canonical(rawFrom);
  const to = canonical(rawTo);
  if (from === "") return refuse("needsFolderName");
  if (pathWithin(to, from)) return refuse("folderIntoItself");
  if (pathWithin(from, to)) return refuse("folderOntoAncestor");
  const there = await cap.statPath(to);
  if (!there.ok && there.error.code !== "not_found") return there;
  if (there.ok && there.value.type !== "dir") return refuse("destinationExists");
  const tree = await walkTree(cap, from, boundOf(options.limit));
  if (!tree.ok) return tree;
  if (there.ok) {
    const clash = await mergeClash(cap, tree.value, from, to, overwrite);
    if (!clash.ok) return clash;
  }
  const rebased = (path: string) => to + path.slice(from.length);
  const pruned = await takeLinks(tree.value, (dir) => cap.movePath(dir, rebased(dir), overwrite), isFolderMoveRefusal);
  if (!pruned.ok) return pruned;
  const moved = await transferTree(
    cap,
    pruned.value.tree,
    from,
    to,
    true,
    (source, destination) => cap.movePath(source, destination, overwrite),
    options.onStep,
  );
  return moved.ok ? ok({ ...moved.value, folders: moved.value.folders + pruned.value.links }) : moved;
}

/** Into an existing folder: a file onto a folder, a folder onto a file, or (without `overwrite`) a file onto a file. */
async function mergeClash(
  cap: CapStub,
  tree: Tree,
  from: string,
  to: string,
  overwrite: boolean,
): Promise<Result<null>> {
  const rebased = (path: string) => to + path.slice(from.length);
  const checks: [string, "dir" | "file"][] = [
    ...tree.dirs.slice(1).map((d) => [d, "dir"] as [string, "dir"]),
    ...tree.files.map((f) => [f, "file"] as [string, "file"]),
  ];
  for (const [path, type] of checks) {
    await yieldTurn();
    const stat = await cap.statPath(rebased(path));
    if (!stat.ok && stat.error.code === "not_found") continue;
    if (!stat.ok) return stat;
    if (stat.value.type !== type) return refuse("fileDirectoryClash");
    if (type === "file" && !overwrite) return refuse("destinationExists");
  }
  return ok(null);
}
