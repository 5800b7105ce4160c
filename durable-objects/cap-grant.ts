import type { RelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Right } from "../shared/rights.ts";
import type { Backend } from "../shared/wire-types.ts";
import type { Root } from "../storage-adapters/storage-adapter.ts";
import type { AuditOp, CapAudit } from "./cap-audit.ts";
import type { CapAuthorize } from "./cap-authorize.ts";

/** What the worker needs to perform one storage operation this object decided: the backend, root levels and path. */
export interface StorageGrant {
  backend: Backend;
  root: Root;
  path: RelPath;
}

/**
 * Decides an operation the worker will perform itself (alive, `rights`, the
 * path checked as `kind`), audited as `op`, and hands it what it needs for
 * this one request, so the bytes go between storage and the client without
 * crossing this object (reads: CapFiles.grantRead; content search:
 * cap-search.ts). The grant never leaves the worker: the root stays out of
 * every answer. A checked path loses its brand crossing RPC; the worker
 * rebuilds it with the same check (durable-objects/path-check.ts), which is pure.
 */
export function grantPath(
  gate: CapAuthorize,
  audit: CapAudit,
  op: AuditOp,
  rights: readonly Right[],
  kind: "file" | "dir",
  rawPath: string | null,
): Promise<Result<StorageGrant>> {
  return audit.run(op, rawPath, async () => {
    const access = await gate.authorize({ rights }, { kind, raw: [rawPath] });
    if (!access.ok) return access;
    const {
      cap,
      paths: [at],
    } = access.value;
    return ok({ backend: cap.backend, root: at.root, path: at.path });
  });
}
