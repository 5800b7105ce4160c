import { stat } from "node:fs/promises";
import path from "node:path";

/**
 * Where `get REMOTE [LOCAL]` writes, as sftp decides: no LOCAL → `./NAME`;
 * a LOCAL ending in `/`, or an existing local folder → `LOCAL/NAME`;
 * otherwise LOCAL itself. NAME is REMOTE's last segment, typed by the user.
 */
export async function localFileTarget(local: string | undefined, name: string): Promise<string> {
  if (local === undefined) return name;
  if (local.endsWith("/") || local.endsWith(path.sep)) return path.join(local, name);
  const isFolder = await stat(local).then(
    (info) => info.isDirectory(),
    () => false,
  );
  return isFolder ? path.join(local, name) : local;
}

/** `get -r REMOTE [LOCAL]`: no LOCAL → `./NAME` (`.` for the cap's root); `LOCAL/` → `LOCAL/NAME`; else LOCAL. */
export function localFolderTarget(local: string | undefined, name: string): string {
  if (local === undefined) return name === "" ? "." : name;
  if (local.endsWith("/") || local.endsWith(path.sep)) return path.join(local, name);
  return local;
}
