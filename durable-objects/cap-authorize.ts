import { refuse } from "../shared/refusals.ts";
import type { RelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Right } from "../shared/rights.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import type { StorageAdapter } from "../storage-adapters/storage-adapter.ts";
import type { CapHost } from "./cap-host.ts";
import type { CapRecord } from "./cap-record.ts";
import { type CheckedOf, checkKey, type PathKind, parsePath } from "./path-check.ts";

/** Where a cap's record is kept in its object's storage; no record means no such cap. */
export const RECORD = "cap";

/** A right check: all of `rights` (with `any`, one of them), else `refusal` (by default, naming the rights). */
export interface Need {
  rights: readonly Right[];
  any?: boolean;
  refusal?: "listChildrenNeedsSubdir" | "revokeChildNeedsSubdir" | "treeNeedsSubdir";
}

/** The raw paths an operation names, how each must be checked, and what else it asks (see authorize). */
export interface PathRequest<K extends PathKind, R extends readonly (string | null)[], A> {
  kind: K;
  raw: R;
  judge?: (cap: CapRecord) => Result<A>;
}

export interface Access<K extends PathKind, R extends readonly (string | null)[], A> {
  cap: CapRecord;
  paths: { -readonly [I in keyof R]: CheckedOf<K> };
  storage: StorageAdapter;
  judged: A;
}

export function noSuchCap<T>(): Result<T> {
  return refuse("noSuchCap");
}

/**
 * The single chokepoint for a cap's authority: every request is checked here
 * for liveness (not revoked, not expired), rights and path, in that order,
 * before storage is touched. No right is read anywhere else in the cap's
 * modules (durable-objects/path-check.test.ts holds that).
 */
export class CapAuthorize {
  constructor(private readonly host: CapHost) {}

  /** The live record, or `null` when revoked, expired or never minted. */
  async live(): Promise<CapRecord | null> {
    const cap = await this.host.storage.get<CapRecord>(RECORD);
    if (!cap) return null;
    if (cap.expiresAt !== null && Date.now() >= cap.expiresAt) return null;
    return cap;
  }

  /**
   * The chokepoint: liveness, then rights, then the path. Nothing reaches
   * storage without passing all three, and storage gets each path checked
   * (durable-objects/path-check.ts), so no adapter checks it again. What a
   * request asks beyond its path (`judge`: an etag condition, a child's
   * rights, a size, a page) is judged where it always was: once the paths
   * parse, before their keys. Without paths, it stops after the rights.
   */
  async authorize(need: Need): Promise<Result<{ cap: CapRecord }>>;
  async authorize<K extends PathKind, const R extends readonly (string | null)[], A = null>(
    need: Need,
    at: PathRequest<K, R, A>,
  ): Promise<Result<Access<K, R, A>>>;
  async authorize(
    need: Need,
    at?: PathRequest<PathKind, readonly (string | null)[], unknown>,
  ): Promise<Result<unknown>> {
    const cap = await this.live();
    if (!cap) return noSuchCap();
    const allowed = need.any
      ? need.rights.some((r) => cap.rights.includes(r))
      : need.rights.every((r) => cap.rights.includes(r));
    if (!allowed)
      return need.refusal
        ? refuse(need.refusal)
        : refuse("needsRights", { rights: need.rights, any: need.any === true });
    if (!at) return ok({ cap });
    const parsed: RelPath[] = [];
    for (const raw of at.raw) {
      const path = parsePath(raw, at.kind);
      if (!path.ok) return path;
      parsed.push(path.value);
    }
    const storage = selectStorage(this.host.env, cap.backend);
    if (!storage) return refuse("backendMissing");
    const judged = at.judge ? at.judge(cap) : ok(null);
    if (!judged.ok) return judged;
    const paths: unknown[] = [];
    for (const path of parsed) {
      const checked = checkKey(cap.root, path, at.kind);
      if (!checked.ok) return checked;
      paths.push(checked.value);
    }
    return ok({ cap, paths, storage, judged: judged.value });
  }
}
