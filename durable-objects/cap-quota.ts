import { effectiveLimits, type Limits, type Usage } from "../shared/quota.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { CheckedFile } from "../storage-adapters/checked-path.ts";
import type { CapRecord } from "./cap-record.ts";
import { journalPath } from "./cap-versions.ts";
import type { ObjectEnv } from "./object-env.ts";
import { rootJournalStub } from "./object-stubs.ts";

/**
 * A cap's side of quotas (the counts live in its root's journal:
 * durable-objects/quota-ledger.ts, quota-holds.ts). A quota binds the cap it
 * was set on and every cap minted from it, as rights do: a child can never
 * limit its parent, and a limit goes with the caps that carry it.
 */
function journalOf(env: ObjectEnv, cap: CapRecord) {
  return env.JOURNALS ? rootJournalStub(env, cap.backend, cap.root[0] ?? "") : null;
}

/**
 * Holds room for a write before storage is touched; `null` when the cap
 * answers to no quota (no call made). A journal that cannot be reached
 * refuses the write: a quota that cannot be checked is not skipped.
 */
export async function holdForWrite(
  env: ObjectEnv,
  cap: CapRecord,
  at: CheckedFile,
  length: number,
): Promise<Result<string | null>> {
  if (!cap.quotas?.length) return ok(null);
  const journal = journalOf(env, cap);
  if (!journal) return refuse("unavailable");
  return journal.reserve(cap.quotas, journalPath(at), length).catch(() => refuse("unavailable"));
}

/** A write that stored nothing gives its hold back (a lost release expires with its upload's deadline). */
export async function releaseHold(env: ObjectEnv, cap: CapRecord, hold: string | null): Promise<void> {
  if (hold === null) return;
  await journalOf(env, cap)
    ?.release(hold)
    .catch(() => null);
}

/** What `GET /object/<token>` shows: the usage of the cap's own subtree (`null` without a journal) and its limits. */
export async function quotaInfo(env: ObjectEnv, cap: CapRecord): Promise<{ usage: Usage | null; limits: Limits }> {
  const limits = effectiveLimits(cap.quotas);
  const journal = journalOf(env, cap);
  if (!journal) return { usage: null, limits };
  const usage = await journal.usage(cap.root.slice(1).join("")).catch(() => null);
  return { usage: usage?.ok ? usage.value : null, limits };
}
