import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { DEFAULT_RETENTION } from "../shared/retention.ts";
import type { VersionPage, WriteResult } from "../shared/wire-types.ts";
import type { CheckedFile } from "../storage-adapters/checked-path.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import type { CapRecord } from "./cap-record.ts";
import { parseLimit } from "./list-cursor.ts";
import type { ObjectEnv } from "./object-env.ts";
import { rootJournalStub } from "./object-stubs.ts";
import type { Mutation } from "./version-journal.ts";

/** Versions listed per page at most (and by default). */
export const MAX_VERSION_PAGE = 100;

/**
 * A cap's side of version history (the journal is durable-objects/root-journal.ts).
 * The cap object calls these only after its chokepoint admitted the request;
 * every lookup carries the cap's scope, its root below level 0, so a child
 * reaches only versions of paths inside its own subtree.
 */
function journalOf(env: ObjectEnv, cap: CapRecord) {
  // A deployment without the binding keeps no history; it must not turn every write into a failure.
  if (!env.JOURNALS) return null;
  return { journal: rootJournalStub(env, cap.backend, cap.root[0] ?? ""), scope: cap.root.slice(1).join("") };
}

/** The oldest version id `cap` may see: 0 (all) for roots and for caps minted before floors were kept. */
export function historyFloor(cap: CapRecord): number {
  return cap.historyFrom ?? 0;
}

/**
 * The floor a child of `parent` gets: its parent's with `history: "all"`
 * (never lower, so no grandchild reaches below it), else one past the
 * journal's newest version, so what was written and deleted before the
 * delegation stays out of its reach. Unknown when the journal cannot be
 * reached: the mint is refused rather than made without a floor.
 */
export async function childHistoryFrom(
  env: ObjectEnv,
  parent: CapRecord,
  history: "all" | null | undefined,
): Promise<Result<number | undefined>> {
  if (history === "all") return ok(parent.historyFrom);
  const place = journalOf(env, parent);
  // No journal, no history to hide; the parent's floor still binds.
  if (!place) return ok(parent.historyFrom);
  const newest = await place.journal.newestId().catch(() => refuse("unavailable"));
  if (!newest.ok) return newest;
  return ok(Math.max(newest.value + 1, historyFloor(parent)));
}

/** A watcher's `since` within the cap's floor: a resume from before it goes on from the floor. */
export function sinceWithin(cap: CapRecord, since: number | null): number | null {
  return since === null ? null : Math.max(since, historyFloor(cap) - 1);
}

/** A checked file's path relative to level 0: how the journal names it. */
export function journalPath(at: CheckedFile): string {
  return at.root.slice(1).join("") + at.path.text;
}

/**
 * Records a mutation storage has done. It is done either way: a journal that
 * fails loses this version, never the write. A journal that answered with a
 * failure recorded nothing (its commit is one transaction), so the blob this
 * write kept is dropped; one that could not be reached at all may have
 * recorded it, so the blob stays.
 */
export async function recordVersion(env: ObjectEnv, cap: CapRecord, change: Mutation): Promise<void> {
  const place = journalOf(env, cap);
  if (!place) return;
  const committed = await place.journal
    .commit(cap.backend, change, cap.id, cap.retention ?? DEFAULT_RETENTION)
    .catch(() => null);
  if (committed?.ok === false && change.op === "write" && change.blob !== null && !change.bytes)
    await selectStorage(env, cap.backend)
      ?.dropVersion(change.blob)
      .catch(() => null);
}

/** The page a history request asks: `cursor` is the id of the last version seen. */
export function versionPageRequest(
  rawCursor: string | null,
  rawLimit: string | null,
): Result<{ before: number | null; limit: number }> {
  const limit = parseLimit(rawLimit, MAX_VERSION_PAGE);
  if (!limit.ok) return limit;
  if (rawCursor === null || rawCursor === "") return ok({ before: null, limit: limit.value });
  if (!/^[1-9][0-9]{0,15}$/.test(rawCursor) || !Number.isSafeInteger(Number(rawCursor))) return refuse("invalidCursor");
  return ok({ before: Number(rawCursor), limit: limit.value });
}

export async function versionPage(
  env: ObjectEnv,
  cap: CapRecord,
  at: CheckedFile,
  page: { before: number | null; limit: number },
): Promise<Result<VersionPage>> {
  const place = journalOf(env, cap);
  if (!place) return refuse("unavailable");
  const { journal } = place;
  // One more than the page: a page that is exactly full but last says `cursor: null`, as the contract promises
  // (a cursor there would send every client for one more, empty, page).
  const listed = await journal
    .history(journalPath(at), page.before, page.limit + 1, historyFloor(cap))
    .catch(() => refuse("unavailable"));
  if (!listed.ok) return listed;
  const versions = listed.value.versions.slice(0, page.limit);
  const more = listed.value.versions.length > page.limit;
  return ok({ versions, cursor: more ? (versions.at(-1)?.id ?? null) : null });
}

/** A version's bytes, with what a restore needs: its path relative to the cap's root. */
export interface VersionBody {
  path: string;
  size: number;
  sha256: string | null;
  contentType: string;
  body: ReadableStream<Uint8Array>;
}

export async function versionBytes(env: ObjectEnv, cap: CapRecord, rawId: string): Promise<Result<VersionBody>> {
  const place = journalOf(env, cap);
  if (!place) return refuse("unavailable");
  const { journal, scope } = place;
  const found = await journal.find(rawId, scope, historyFloor(cap)).catch(() => refuse("unavailable"));
  if (!found.ok) return found;
  const { blob, path, contentType, version, bytes: inline } = found.value;
  if (blob === null) return refuse("versionRedacted");
  const storage = selectStorage(env, cap.backend);
  if (!storage) return refuse("backendMissing");
  const bytes = inline
    ? ok({ size: inline.byteLength, body: new Blob([inline]).stream() })
    : await storage.readVersion(blob);
  if (!bytes.ok) return bytes;
  return ok({
    path,
    size: bytes.value.size,
    sha256: version.sha256,
    contentType: contentType ?? "application/octet-stream",
    body: bytes.value.body,
  });
}

export async function redactVersion(env: ObjectEnv, cap: CapRecord, rawId: string): Promise<Result<null>> {
  const place = journalOf(env, cap);
  if (!place) return refuse("unavailable");
  const { journal, scope } = place;
  return journal.redact(rawId, scope, historyFloor(cap)).catch(() => refuse("unavailable"));
}

/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The root journal's change feed for this cap's subtree, passed through a
 * stream this cap object holds: `open` gets its closer, which the object
 * calls when the cap is revoked; its expiry closes it by a timer. Closing it
 * cancels the journal's side too.
 */
export async function watchThrough(
  env: ObjectEnv,
  cap: CapRecord,
  rawSince: string | null,
  open: Set<() => void>,
): Promise<Result<{ stream: ReadableStream<Uint8Array>; close: () => void }>> {
  const since = parseSince(rawSince);
  if (!since.ok) return since;
  const place = journalOf(env, cap);
  if (!place) return refuse("unavailable");
  const { journal, scope } = place;
  // Live events are all newer than the floor: it was past the newest version when this cap was minted.
  const feed = await journal.watch(scope, sinceWithin(cap, since.value), cap.id).catch(() => refuse("unavailable"));
  if (!feed.ok) return feed;
  let controller!: TransformStreamDefaultController<Uint8Array>;
  const guard = new TransformStream<Uint8Array, Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  const delay = cap.expiresAt === null ? Infinity : Math.max(0, cap.expiresAt - Date.now());
  const timer = delay <= MAX_TIMER_MS ? setTimeout(() => close(), delay) : null;
  const close = () => {
    open.delete(close);
    if (timer !== null) clearTimeout(timer);
    try {
      controller.terminate();
    } catch {
      // already closed
    }
  };
  open.add(close);
  feed.value
    .pipeTo(guard.writable)
    .catch(() => undefined)
    .finally(close);
  return ok({ stream: guard.readable, close });
}

/** A watcher's `since`: a version id, or nothing (`null` or empty) for live changes only. */
export function parseSince(rawSince: string | null): Result<number | null> {
  if (rawSince === null || rawSince === "") return ok(null);
  if (!/^(0|[1-9][0-9]{0,15})$/.test(rawSince) || !Number.isSafeInteger(Number(rawSince)))
    return refuse("sinceInvalid");
  return ok(Number(rawSince));
}

/** What a restore answers: the write it made, as `PUT /file` reports it. */
export type RestoreResult = WriteResult;
