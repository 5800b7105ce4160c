/**
 * When a folder on disk "exists" for a cap. On R2 a directory exists while a
 * key lies under it (a file, or the folder's marker); the disk must answer the
 * same, so a folder counts only while it holds, at some depth, a file a cap
 * could read or a {@link FOLDER_MARKER}. Empty folders without one (made by
 * hand, left by a crash or a refused write), folders holding only reserved or
 * unaddressable names, and links leading outside do not count.
 */
import { constants } from "node:fs";
import { readdir } from "node:fs/promises";
import { isListableName } from "../shared/rel-path.ts";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import { closeEnd, type DirChain, heldPath, inDir, OPEN_NOFOLLOW, walk } from "./beneath.ts";
import { errnoOf } from "./fs-errors.ts";
import { type FileHandle, open } from "./sync-fs.ts";

/**
 * An empty file that keeps a folder made by a cap (or emptied by one) in
 * existence, as R2's `dir/` marker key does. Reserved, so no cap can name it.
 */
export const FOLDER_MARKER = ".capvault-folder";

/** Whether the held folder carries its marker (a regular file; a link there is not one). */
export async function isMarked(dir: FileHandle): Promise<boolean> {
  try {
    const marker = await open(inDir(dir, FOLDER_MARKER), OPEN_NOFOLLOW);
    await marker.close();
    return true;
  } catch {
    return false;
  }
}

/** Marks the held folder (an existing marker is fine). */
export async function mark(dir: FileHandle, mode: number): Promise<void> {
  try {
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
    const marker = await open(inDir(dir, FOLDER_MARKER), flags, mode);
    await marker.close();
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
  }
}

/** Work allowed for one visibility question before answering "visible" (a bound on cost, never on access). */
export const ENTRY_BUDGET = 10_000;
/**
 * Folders deeper than this below the one asked about count as "visible"
 * without looking further (each level holds a descriptor while it is looked
 * at). It exceeds any depth a cap can name (keys are at most 1,024 bytes, so
 * at most 512 segments), so only hand-made trees reach it. empty-folders.ts
 * uses the same bounds, so a folder stat calls missing is one a write may
 * replace, and one it calls visible is one a write refuses.
 */
export const MAX_TREE_DEPTH = 600;

export interface DirName {
  name: string;
  /** The folder's own hint (d_type) that this is a regular file; the open decides. */
  regularHint: boolean;
}

/**
 * The entries of a held folder that a cap could name: UTF-8, accepted
 * unchanged by the path parser (as a whole path if the folder is the cap's root).
 */
export async function addressableNames(dir: FileHandle, atCapRoot: boolean): Promise<DirName[]> {
  const entries = await readdir(heldPath(dir), { withFileTypes: true, encoding: "buffer" });
  const out: DirName[] = [];
  for (const entry of entries) {
    const name = decodeUtf8Strict(entry.name);
    if (name === null) continue;
    if (isListableName(name, atCapRoot)) out.push({ name, regularHint: entry.isFile() });
  }
  return out;
}

/** Whether `chain.top` holds a file a cap could read, at any depth, links followed within the boundary. */
export async function holdsFile(
  chain: DirChain,
  budget = { left: ENTRY_BUDGET },
  seen = new Set<string>(),
  depth = 0,
): Promise<boolean> {
  if (depth > MAX_TREE_DEPTH) return true;
  const self = await chain.top.stat({ bigint: true });
  const id = `${self.dev}:${self.ino}`;
  if (seen.has(id)) return false;
  seen.add(id);
  if (await isMarked(chain.top)) return true;
  // Everything inside a folder lies below the cap's root, where any valid segment is a name.
  const names = await addressableNames(chain.top, false);
  // Likely files first: most folders are answered by their first entry.
  names.sort((a, b) => Number(b.regularHint) - Number(a.regularHint));
  for (const { name } of names) {
    if (--budget.left < 0) return true;
    const end = await walk(chain, [{ name, fromLink: false }], { followFinal: true });
    if (!end.ok) continue;
    try {
      if (end.value.kind === "file") return true;
      if (end.value.kind === "dir" && (await holdsFile(end.value.chain, budget, seen, depth + 1))) return true;
    } finally {
      await closeEnd(end.value);
    }
  }
  return false;
}

/**
 * After a file left the folder `chain.top`: a folder stays until removed, so
 * one left holding nothing a cap sees is marked (R2 marks it on every delete).
 * Never the base folder itself, which stands for the top of the bucket.
 */
export async function keepFolder(chain: DirChain, base: FileHandle, mode: number): Promise<void> {
  const [top, at] = await Promise.all([chain.top.stat({ bigint: true }), base.stat({ bigint: true })]);
  if (top.dev === at.dev && top.ino === at.ino) return;
  if (!(await holdsFile(chain))) await mark(chain.top, mode);
}
