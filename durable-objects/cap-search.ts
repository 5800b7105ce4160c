import type { Result } from "../shared/result.ts";
import type { CapAudit } from "./cap-audit.ts";
import type { CapAuthorize } from "./cap-authorize.ts";
import { grantPath, type StorageGrant } from "./cap-grant.ts";

/**
 * Decides a content search (alive, `read` and `list`, the folder's path) and
 * hands the worker the folder to search for this one request, as grantRead
 * does for a read: the files' bytes go from storage to the worker's scan and
 * never cross this object, which stays free for the cap's other requests.
 * The grant never leaves the worker, so the root stays out of every answer.
 */
export function grantSearch(
  gate: CapAuthorize,
  audit: CapAudit,
  rawPath: string | null,
): Promise<Result<StorageGrant>> {
  return grantPath(gate, audit, "list", ["read", "list"], "dir", rawPath);
}
