import type { RelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Backend } from "../shared/wire-types.ts";
import type { Root } from "../storage-adapters/storage-adapter.ts";
import type { CapAudit } from "./cap-audit.ts";
import type { CapAuthorize } from "./cap-authorize.ts";

/** What the worker needs to run one content search this object decided: the folder's root levels and path. */
export interface SearchGrant {
  backend: Backend;
  root: Root;
  path: RelPath;
}

/**
 * Decides a content search (alive, `read` and `list`, the folder's path) and
 * hands the worker the folder to search for this one request, as grantRead
 * does for a read: the files' bytes go from storage to the worker's scan and
 * never cross this object, which stays free for the cap's other requests.
 * The grant never leaves the worker, so the root stays out of every answer.
 */
export function grantSearch(gate: CapAuthorize, audit: CapAudit, rawPath: string | null): Promise<Result<SearchGrant>> {
  return audit.run("list", rawPath, async () => {
    const access = await gate.authorize({ rights: ["read", "list"] }, { kind: "dir", raw: [rawPath] });
    if (!access.ok) return access;
    const {
      cap,
      paths: [at],
    } = access.value;
    return ok({ backend: cap.backend, root: at.root, path: at.path });
  });
}
