import { CapError } from "../../clients/typescript/cap-error.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { joinRemote } from "../remote-path.ts";
import type { Limiter } from "./limiter.ts";
import { childPath, type WalkResult } from "./tree-types.ts";
import { MAX_RELATIVE_PATH_BYTES, unsafeVaultName } from "./vault-name.ts";

/** A listing this big is not a folder anyone syncs; a hostile vault could otherwise page forever. */
const MAX_ENTRIES = 1_000_000;

/**
 * Every file below `root` in the vault, each folder listed to its last page
 * (the SDK follows cursors and throws on any failure, so a walk that returns
 * saw everything: what `--delete` relies on). Folders are listed through the
 * limiter, several at once. Names are checked before use; a bad one is an
 * issue, never a path. `maxDepth` stops descending (`tree -L`).
 */
export async function walkRemote(
  cap: FsCap,
  root: string,
  limiter: Limiter,
  options: { maxDepth?: number } = {},
): Promise<WalkResult> {
  const result: WalkResult = { files: new Map(), dirs: new Set(), issues: [] };
  let seen = 0;
  const visit = async (relative: string): Promise<void> => {
    const entries = await limiter.run(async () => {
      const all = [];
      for await (const entry of cap.list(joinRemote(root, relative))) {
        if (++seen > MAX_ENTRIES)
          throw new CapError("unavailable", 0, `more than ${MAX_ENTRIES} entries below the folder`);
        all.push(entry);
      }
      return all;
    });
    const names = new Set<string>();
    const subfolders: string[] = [];
    for (const entry of entries) {
      const problem = unsafeVaultName(entry.name) ?? (names.has(entry.name) ? "a name listed twice" : null);
      const path = childPath(relative, String(entry.name));
      if (problem !== null) {
        result.issues.push({ path, code: "unsafe_name", message: `the vault listed ${problem}; skipped` });
        continue;
      }
      names.add(entry.name);
      if (Buffer.byteLength(path) > MAX_RELATIVE_PATH_BYTES) {
        result.issues.push({ path, code: "unsafe_name", message: "a path over 1024 bytes; skipped" });
      } else if (entry.type === "dir") {
        result.dirs.add(path);
        if (path.split("/").length < (options.maxDepth ?? Number.POSITIVE_INFINITY)) subfolders.push(path);
      } else if (entry.type === "file" && Number.isSafeInteger(entry.size) && (entry.size ?? -1) >= 0) {
        const sha256 = (entry as { sha256?: unknown }).sha256;
        result.files.set(path, {
          size: entry.size ?? 0,
          ...(typeof entry.etag === "string" ? { etag: entry.etag } : {}),
          ...(typeof sha256 === "string" ? { sha256 } : {}),
        });
      } else {
        result.issues.push({ path, code: "unsafe_name", message: "an entry of unknown type or size; skipped" });
      }
    }
    await Promise.all(subfolders.map(visit));
  };
  await visit("");
  return result;
}
