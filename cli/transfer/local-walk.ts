import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { childPath, type WalkResult } from "./tree-types.ts";

/**
 * Every regular file below the local folder `root`. Symlinks are neither
 * followed nor reported as files (as rclone does without -L): following one
 * could upload, or on `--delete` remove, something outside the folder the
 * user named. Sockets, FIFOs and devices are skipped the same way.
 */
export async function walkLocal(root: string): Promise<WalkResult> {
  const skippedLocal: string[] = [];
  const result: WalkResult = { files: new Map(), dirs: new Set(), issues: [], skippedLocal };
  const visit = async (relative: string): Promise<void> => {
    const entries = await readdir(path.join(root, relative), { withFileTypes: true });
    const subfolders: string[] = [];
    await Promise.all(
      entries.map(async (entry) => {
        const rel = childPath(relative, entry.name);
        if (entry.isDirectory()) {
          result.dirs.add(rel);
          subfolders.push(rel);
        } else if (entry.isFile()) {
          result.files.set(rel, { size: (await lstat(path.join(root, rel))).size });
        } else {
          skippedLocal.push(rel);
        }
      }),
    );
    await Promise.all(subfolders.map(visit));
  };
  await visit("");
  return result;
}
