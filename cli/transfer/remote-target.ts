import { isCapError } from "../../clients/typescript/cap-error.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { joinRemote, namesFolder, remotePathArg } from "../remote-path.ts";

/**
 * Where `put LOCAL [REMOTE]` writes, as sftp decides: no REMOTE → `NAME` in
 * the cap's root; a REMOTE ending in `/` (or `.`, `/`), or an existing remote
 * folder → `REMOTE/NAME`; otherwise REMOTE itself. NAME is LOCAL's last
 * segment. A cap that may not stat (neither read nor list) writes to REMOTE.
 */
export async function remoteFileTarget(cap: FsCap, remote: string | undefined, name: string): Promise<string> {
  if (remote === undefined) return name;
  const path = remotePathArg(remote);
  if (namesFolder(path)) return joinRemote(path, name);
  try {
    if ((await cap.stat(path)).type === "dir") return joinRemote(path, name);
  } catch (error) {
    if (!isCapError(error) || (error.code !== "not_found" && error.code !== "forbidden")) throw error;
  }
  return path;
}

/**
 * `put -r LOCAL [REMOTE]`: no REMOTE → folder `NAME`; `REMOTE/` → `REMOTE/NAME`;
 * else REMOTE itself. Never "inside if it exists", so running the same
 * command twice lands in the same place (cp -r's `dir/dir` surprise).
 */
export function remoteFolderTarget(remote: string | undefined, name: string): string {
  if (remote === undefined) return name;
  const path = remotePathArg(remote);
  return namesFolder(path) ? joinRemote(path, name) : path;
}
