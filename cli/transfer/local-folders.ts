import { lstat, mkdir } from "node:fs/promises";
import path from "node:path";
import { LocalRefusal } from "./local-refusal.ts";

/**
 * Creates the folders of `relativeDir` under `root` one segment at a time,
 * checking each with lstat: a symlink (or a file) where a folder should be
 * is refused, never followed, so a hostile listing cannot steer a download
 * out of `root` through a link planted there. `verified` remembers folders
 * already checked in this run, so 1,000 files in one folder cost one check.
 */
export async function ensureLocalDir(root: string, relativeDir: string, verified: Set<string>): Promise<void> {
  if (relativeDir === "") return;
  const segments = relativeDir.split("/");
  for (let i = 1; i <= segments.length; i++) {
    const relative = segments.slice(0, i).join("/");
    if (verified.has(relative)) continue;
    const full = path.join(root, relative);
    try {
      await mkdir(full);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const info = await lstat(full);
    if (info.isSymbolicLink()) throw new LocalRefusal("symlink", `${relative} is a symlink locally; not followed`);
    if (!info.isDirectory()) throw new LocalRefusal("not_a_folder", `${relative} is not a folder locally`);
    verified.add(relative);
  }
}
