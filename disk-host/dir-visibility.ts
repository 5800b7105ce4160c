/**
 * When a folder on disk "exists" for a cap. On R2 a directory exists while a
 * key lies under it; the disk must answer the same, so a folder counts only
 * while it holds, at some depth, a file a cap could read. Empty folders (made
 * by hand, or left by a crash), folders holding only reserved or
 * unaddressable names, and links leading outside do not count.
 */
import { readdir } from "node:fs/promises";
import { isListableName } from "../shared/rel-path.ts";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import { closeEnd, type DirChain, heldPath, walk } from "./beneath.ts";
import type { FileHandle } from "./sync-fs.ts";

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
