import type { QuotaRule } from "../shared/quota.ts";
import type { Retention } from "../shared/retention.ts";
import type { Right } from "../shared/rights.ts";
import type { Backend } from "../shared/wire-types.ts";
import type { Root } from "../storage-adapters/storage-adapter.ts";

/** A reference to another cap's object: its public id and the token digest that names its object. */
export interface CapRef {
  id: string;
  key: string;
}

/**
 * A cap's private state, the single row that makes its object a live cap.
 * No row means no cap: a Durable Object exists for every name, so absence is
 * the only safe reading of an empty one.
 */
export interface CapRecord {
  id: string;
  key: string;
  backend: Backend;
  /** Never leaves this object except towards the storage adapter. */
  root: Root;
  rights: Right[];
  label: string | null;
  createdAt: number;
  expiresAt: number | null;
  /** The cap this one was minted from; `null` for a root cap. */
  parent: CapRef | null;
  /**
   * Levels below its root (a root is 0), set at mint and bounded by
   * {@link MAX_DELEGATION_DEPTH}; absent on caps minted before (see {@link delegationDepth}).
   */
  depth?: number;
  /** The root's version retention, set by the admin and inherited at every mint; absent on older caps (defaults). */
  retention?: Retention;
  /**
   * The quotas this cap answers to (shared/quota.ts): its own rule and its
   * ancestors', outermost first, copied at every mint as retention is. Absent
   * on caps without any (and on older caps).
   */
  quotas?: QuotaRule[];
  /**
   * The oldest version id of the root's journal this cap may see (list, read,
   * restore, redact, watch): one past the newest at its mint, so a delegate
   * never reads what was deleted before it existed. Absent: every version (a
   * root, a child minted with `history: "all"` from one, and caps minted before floors).
   */
  historyFrom?: number;
  /**
   * A holder-bound cap's key thumbprint (RFC 7638, issue 20): every request
   * must carry a DPoP proof by that key (durable-objects/holder-binding.ts).
   * Absent or null: a bearer cap (every cap minted before binding).
   */
  holder?: { jkt: string } | null;
  /**
   * The public id of the format-0 cap this one re-issues (`capvault
   * reissue-legacy`, durable-objects/legacy-reissue.ts); absent on every
   * minted cap.
   */
  reissuedFrom?: string;
}

/**
 * How many levels below its root a cap may be minted. A chain of mints is a
 * chain of objects each call must pass through, and revoking its top
 * cascades down all of it, so its length is what both cost.
 */
export const MAX_DELEGATION_DEPTH = 16;

/**
 * A cap's level below its root. A cap minted before depths were recorded
 * counts as a root's direct child (1) unless it is a root: the least it can
 * be, so an existing delegation keeps working and its new levels are bounded
 * from there.
 */
export function delegationDepth(cap: CapRecord): number {
  return cap.depth ?? (cap.parent === null ? 0 : 1);
}

/** What a parent remembers of a child: enough to list it and to revoke it, and no token. */
export interface ChildRecord extends CapRef {
  label: string | null;
  /** Relative to the parent's root. */
  path: string;
  rights: Right[];
  createdAt: number;
  expiresAt: number | null;
}

/** Where a cap's {@link Tombstone} is kept. */
export const TOMBSTONE = "tombstone";

/** Left behind while a revocation cascade still has descendants to reach. */
export interface Tombstone {
  pending: CapRef[];
  parent: CapRef | null;
}

export const isoOrNull = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
