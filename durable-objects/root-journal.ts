import { DurableObject } from "cloudflare:workers";
import type { QuotaRule, Usage } from "../shared/quota.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Retention } from "../shared/retention.ts";
import type { Backend, Version } from "../shared/wire-types.ts";
import { checkR2Format, r2FormatChecked } from "../storage-adapters/r2-format.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import { uploadLimitsFrom } from "../storage-adapters/upload-limits.ts";
import { JOURNAL_MIGRATIONS } from "./journal-migrations.ts";
import {
  exportRows,
  importInline,
  importRows,
  isJournalTable,
  liveBlobs,
  supersededBlobs,
} from "./journal-transfer.ts";
import type { ObjectEnv } from "./object-env.ts";
import { QuotaHolds } from "./quota-holds.ts";
import { QuotaLedger } from "./quota-ledger.ts";
import { blockedBy, migrateOnWake } from "./state-migrations.ts";
import { type Mutation, VersionJournal, type VersionRow } from "./version-journal.ts";
import { evictionVictim, inScope, WatchFeed } from "./watch-feed.ts";
import { readSocketRequest } from "./watch-socket-request.ts";
import { WatchSockets } from "./watch-sockets.ts";

const DAY_MS = 24 * 3600 * 1000;
/** Work per alarm run, so one run stays bounded however much history expired at once. */
const PRUNE_BATCH = 500;
/** One R2 delete each: within the 50 subrequests of the Workers Free plan, with room to spare. */
const DROP_BATCH = 40;
/** How soon the alarm runs again while there is work left, or blobs to destroy. */
const SOON_MS = 1_000;
/** Versions a resuming watcher is sent before its stream ends with where to resume. */
const BACKLOG_SCAN = 1_000;

/** A version as a cap inside the root sees it: the path relative to that cap's root. */
export interface ScopedVersion {
  version: Version;
  path: string;
  blob: string | null;
  contentType: string | null;
  size: number | null;
  /** Its bytes, when the journal keeps them itself (small R2 versions); else they are in storage, under `blob`. */
  bytes: Uint8Array | null;
}

/**
 * The history of one storage root (named by backend and level 0: every cap
 * over that root shares it). Caps report each mutation after storage did it
 * (`commit`) and ask for history through `history`/`find`, always with their
 * own scope (their root below level 0): a row outside the scope is answered
 * exactly as an id that does not exist. Every method returns a Result.
 */
export class RootJournal extends DurableObject<ObjectEnv> {
  /**
   * Before anything else touches storage (the fields below only hold it): the
   * journal's tables are its migrations' (journal-migrations.ts). A refusal
   * here (newer state, or a failed migration, rolled back) answers every call.
   */
  #blocked = blockedBy(migrateOnWake(this.ctx.storage, "journal", JOURNAL_MIGRATIONS, { stampEmpty: true }));

  constructor(ctx: DurableObjectState, env: ObjectEnv) {
    super(ctx, env);
    // Its state reaches the bucket: the layout's format too, once per isolate (r2-format.ts).
    if (!this.#blocked && !r2FormatChecked())
      void ctx.blockConcurrencyWhile(async () => {
        this.#blocked = blockedBy(await checkR2Format(env.BUCKET));
      });
  }
  private readonly ledger = new QuotaLedger(this.ctx.storage.sql);
  private readonly holds = new QuotaHolds(this.ctx.storage.sql);
  // A blob whose bytes go (pruned, redacted) stops counting in the same transaction.
  private readonly journal = new VersionJournal(this.ctx.storage.sql, (blob) => this.ledger.forgetBlob(blob));
  private readonly feed = new WatchFeed();
  private readonly sockets = new WatchSockets(this.ctx);
  /**
   * The alarm as this object last set or read it (`undefined`: not known yet), so a commit asks
   * storage for it only once per wake and sets it only when it moves earlier. Only this object
   * sets or deletes its alarm, and a run of it clears it (see `alarm`), so the copy stays true.
   */
  private alarmAt: number | null | undefined;
  /** The settings as last written: a commit rewrites them only when they change. */
  private readonly written = new Map<string, string | number>();

  async commit(backend: Backend, change: Mutation, actor: string, retention: Retention): Promise<Result<string>> {
    if (this.#blocked) return this.#blocked;
    try {
      // All or nothing: a failed commit records nothing, so the cap may drop the blob it kept.
      const before = this.journal.newestId();
      const id = this.ctx.storage.transactionSync(() => {
        this.keepSetting("backend", backend);
        this.keepSetting("keepDays", retention.keepDays);
        this.ledger.apply(change);
        if (change.op === "write") this.holds.release(change.hold);
        return this.journal.record(change, actor, Date.now(), retention.keepVersions);
      });
      // Remembered only once committed: a rolled-back write must be written again.
      this.written.set("backend", backend).set("keepDays", retention.keepDays);
      this.publish(this.journal.after(before, 4));
      await this.schedule();
      return ok(String(id));
    } catch {
      return refuse("unavailable");
    }
  }

  /**
   * `path` is relative to level 0 (the cap's scope and its path joined); `from` is the cap's
   * history floor: rows older than it are answered as rows that never were.
   */
  async history(
    path: string,
    before: number | null,
    limit: number,
    from = 0,
  ): Promise<Result<{ versions: Version[] }>> {
    if (this.#blocked) return this.#blocked;
    try {
      return ok({ versions: this.journal.history(path, before, limit, from).map(toVersion) });
    } catch {
      return refuse("unavailable");
    }
  }

  /** The newest version id so far (0 for none): a cap minted now sees only the versions after it. */
  async newestId(): Promise<Result<number>> {
    if (this.#blocked) return this.#blocked;
    try {
      return ok(this.journal.newestId());
    } catch {
      return refuse("unavailable");
    }
  }

  /**
   * The version `id`, if its path lies inside `scope` (`""` or a prefix ending in `/`) and it is
   * not older than `from` (the cap's history floor); else `noSuchVersion`.
   */
  async find(id: string, scope: string, from = 0): Promise<Result<ScopedVersion>> {
    if (this.#blocked) return this.#blocked;
    try {
      const row = this.scoped(id, scope, from);
      if (!row) return refuse("noSuchVersion");
      return ok({
        version: toVersion(row),
        path: row.path.slice(scope.length),
        blob: row.blob,
        contentType: row.content_type,
        size: row.size,
        bytes: row.blob === null ? null : this.journal.inlineBytes(row.blob),
      });
    } catch {
      return refuse("unavailable");
    }
  }

  /** Redacts the version `id` within `scope`: its bytes (shared with any other row) go; the rows stay. */
  async redact(id: string, scope: string, from = 0): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    try {
      const row = this.scoped(id, scope, from);
      if (!row) return refuse("noSuchVersion");
      if (row.blob === null) return ok(null);
      // Bytes are destroyed for every row holding them: a floored cap may not reach below its floor that way.
      if (from > 0 && this.journal.heldBefore(row.blob, from)) return refuse("redactBeforeFloor");
      this.journal.redact(row.blob);
      // This blob first: a full batch of others may be waiting, and the answer says its bytes are gone.
      await this.dropOrphans([row.blob]);
      await this.dropOrphans();
      await this.schedule();
      return ok(null);
    } catch {
      return refuse("unavailable");
    }
  }

  /**
   * A server-sent-event stream of the changes inside `scope`: those after
   * version `since` first (at most {@link BACKLOG_SCAN} versions looked at;
   * past that the stream ends with a `resume` event naming where to go on),
   * then each change as it is committed. `capId` is the watching cap: it
   * holds at most its share of the root's watchers.
   */
  async watch(scope: string, since: number | null, capId: string): Promise<Result<ReadableStream<Uint8Array>>> {
    if (this.#blocked) return this.#blocked;
    try {
      this.makeRoom(capId);
      const { backlog, cut } = this.backlog(scope, since);
      return ok(this.feed.open(scope, capId, backlog, cut));
    } catch {
      return refuse("unavailable");
    }
  }

  /**
   * The WebSocket form of {@link watch}: the worker forwards the upgrade with
   * the watcher the cap's object granted (worker/watch-socket.ts). The socket
   * is accepted for hibernation, its backlog sent, then live events.
   */
  override async fetch(request: Request): Promise<Response> {
    if (this.#blocked) return new Response(this.#blocked.error.message, { status: 503 });
    const asked = readSocketRequest(request);
    if (!asked) return new Response(null, { status: 400 });
    try {
      // Nothing awaited from the scan to the accept: no commit can fall between backlog and live.
      this.makeRoom(asked.capId);
      const { backlog, cut } = this.backlog(asked.scope, asked.since);
      return this.sockets.accept(asked, backlog, cut);
    } catch {
      return new Response(null, { status: 503 });
    }
  }

  /** Closes the WebSocket watchers of one cap: its object asks when the cap is revoked or expires. */
  async closeWatchers(capId: string): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    try {
      this.sockets.closeCap(capId);
      return ok(null);
    } catch {
      return refuse("unavailable");
    }
  }

  /**
   * Holds room for a write of `length` bytes to `path` (relative to level 0)
   * in every subtree of `chain`, or refuses it (`quota_exceeded`). The
   * commit of the write lets the hold go; `release` does if it failed.
   */
  async reserve(chain: QuotaRule[], path: string, length: number): Promise<Result<string>> {
    if (this.#blocked) return this.#blocked;
    try {
      return this.ctx.storage.transactionSync(() =>
        this.holds.admit(
          chain,
          path,
          length,
          Date.now(),
          (prefix) => this.ledger.usage(prefix),
          (p) => this.ledger.live(p) !== null,
          uploadLimitsFrom(this.env),
        ),
      );
    } catch {
      return refuse("unavailable");
    }
  }

  async release(hold: string): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    try {
      this.holds.release(hold);
      return ok(null);
    } catch {
      return refuse("unavailable");
    }
  }

  // ---- vault export and import (journal-transfer.ts); admin routes only ----

  /** One page of a table, in key order (docs/export-import.md). */
  async exportTable(table: string, after: string | null): Promise<Result<ReturnType<typeof exportRows>>> {
    if (this.#blocked) return this.#blocked;
    if (!isJournalTable(table)) return refuse("importMalformed");
    if (table === "versions" && after !== null && !/^[0-9]{1,16}$/.test(after)) return refuse("invalidCursor");
    try {
      return ok(exportRows(this.ctx.storage.sql, table, after));
    } catch {
      return refuse("unavailable");
    }
  }

  /** One page of the blobs held only as versions, each with a path of its history. */
  async exportBlobs(after: string | null): Promise<Result<ReturnType<typeof supersededBlobs>>> {
    if (this.#blocked) return this.#blocked;
    try {
      return ok(supersededBlobs(this.ctx.storage.sql, after));
    } catch {
      return refuse("unavailable");
    }
  }

  /** The current blob of each live path (at most a listing page of them). */
  async exportLiveBlobs(paths: string[]): Promise<Result<Record<string, string | null>>> {
    if (this.#blocked) return this.#blocked;
    if (!Array.isArray(paths) || paths.length > 4000 || !paths.every((p) => typeof p === "string"))
      return refuse("importMalformed");
    try {
      return ok(liveBlobs(this.ctx.storage.sql, paths));
    } catch {
      return refuse("unavailable");
    }
  }

  /** Writes one page of an archive's rows, in one transaction; `backend` is the backend the root is on now. */
  async importTable(archiveId: string, backend: Backend, table: string, rows: unknown): Promise<Result<number>> {
    if (this.#blocked) return this.#blocked;
    if (!isJournalTable(table) || typeof archiveId !== "string") return refuse("importMalformed");
    try {
      const written = this.ctx.storage.transactionSync(() =>
        importRows(this.ctx.storage.sql, archiveId, table, rows, backend),
      );
      // Settings may have changed under the copy a commit compares against.
      this.written.clear();
      if (written.ok) await this.schedule();
      return written;
    } catch {
      return refuse("unavailable");
    }
  }

  /** An empty version this backend keeps in the journal rather than as a blob (R2: version-blobs.ts). */
  async importInlineBlob(blob: string): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    try {
      importInline(this.ctx.storage.sql, blob);
      return ok(null);
    } catch {
      return refuse("unavailable");
    }
  }

  override webSocketMessage(ws: WebSocket): void {
    if (this.#blocked) return;
    this.sockets.refuseMessage(ws);
  }

  override webSocketClose(ws: WebSocket): void {
    if (this.#blocked) return;
    this.sockets.closed(ws);
  }

  override webSocketError(ws: WebSocket): void {
    if (this.#blocked) return;
    this.sockets.closed(ws);
  }

  /** A commit's rows, to every watcher of either kind whose scope holds them. */
  private publish(rows: VersionRow[]): void {
    this.feed.publish(rows);
    this.sockets.publish(rows);
  }

  /**
   * One more watcher of either kind for `capId`: at its cap's share, or at the most a root holds,
   * one watcher ends, of the cap `evictionVictim` names (watch-feed.ts): that cap's oldest SSE
   * stream (a stream its reader dropped is never seen here, while a dropped socket is), else its
   * oldest socket; each is told to resume.
   */
  private makeRoom(capId: string): void {
    const held = new Map<string, number>();
    for (const id of [...this.feed.caps(), ...this.sockets.caps()]) held.set(id, (held.get(id) ?? 0) + 1);
    const victim = evictionVictim(held, capId);
    if (victim === null) return;
    const newest = this.journal.newestId();
    if (!this.feed.endOldest(victim, newest)) this.sockets.endOldest(victim, newest);
  }

  /** The changes inside `scope` after `since`, at most {@link BACKLOG_SCAN} looked at; `cut` if more may follow. */
  private backlog(scope: string, since: number | null): { backlog: VersionRow[]; cut: number | null } {
    const scanned = since === null ? [] : this.journal.after(since, BACKLOG_SCAN);
    const backlog = scanned.filter((row) => inScope(scope, row.path));
    return { backlog, cut: scanned.length === BACKLOG_SCAN ? scanned.at(-1)!.id : null };
  }

  /** What the subtree `prefix` holds (tracked from the first call on: shared/quota.ts). */
  async usage(prefix: string): Promise<Result<Usage>> {
    if (this.#blocked) return this.#blocked;
    try {
      return ok(this.ctx.storage.transactionSync(() => this.ledger.usage(prefix)));
    } catch {
      return refuse("unavailable");
    }
  }

  async keptBytes(): Promise<number> {
    if (this.#blocked) return 0;
    return this.journal.keptBytes();
  }

  /** Destroys orphaned blobs, then prunes versions older than keepDays, a batch of each per run. */
  override async alarm(): Promise<void> {
    if (this.#blocked) return;
    // The alarm that is running is no longer set.
    this.alarmAt = null;
    await this.dropOrphans();
    const keepDays = this.journal.setting<number>("keepDays");
    if (keepDays !== null) this.journal.pruneOlder(Date.now() - keepDays * DAY_MS, PRUNE_BATCH);
    await this.schedule();
  }

  private scoped(rawId: string, scope: string, from: number): VersionRow | null {
    if (typeof rawId !== "string" || !/^[1-9][0-9]{0,15}$/.test(rawId)) return null;
    const id = Number(rawId);
    if (!Number.isSafeInteger(id)) return null;
    const row = this.journal.find(id);
    return row && row.id >= from && inScope(scope, row.path) ? row : null;
  }

  private async dropOrphans(blobs?: string[]): Promise<void> {
    const backend = this.journal.setting<Backend>("backend");
    const storage = backend === null ? null : selectStorage(this.env, backend);
    if (!storage) return;
    for (const blob of blobs ?? this.journal.orphans(DROP_BATCH)) {
      const dropped = await storage.dropVersion(blob).catch(() => refuse("unavailable"));
      if (dropped.ok) this.journal.forgetOrphan(blob);
    }
  }

  /** The next alarm: soon while blobs wait to be destroyed, else when the oldest version expires. */
  private async schedule(): Promise<void> {
    const keepDays = this.journal.setting<number>("keepDays");
    const oldest = this.journal.oldestAt();
    const waiting = this.journal.orphans(1).length > 0;
    const due = [
      waiting ? Date.now() + SOON_MS : null,
      keepDays !== null && oldest !== null ? Math.max(oldest + keepDays * DAY_MS, Date.now() + SOON_MS) : null,
    ].filter((t) => t !== null);
    if (due.length === 0) return;
    const next = Math.min(...due);
    if (this.alarmAt === undefined) {
      const read = await this.ctx.storage.getAlarm();
      // Another commit may have set it while this one waited.
      if (this.alarmAt === undefined) this.alarmAt = read;
    }
    if (this.alarmAt !== null && this.alarmAt <= next) return;
    this.alarmAt = next;
    await this.ctx.storage.setAlarm(next);
  }

  /** Writes a setting unless this object already wrote that value (inside the caller's transaction). */
  private keepSetting(name: string, value: string | number): void {
    if (this.written.get(name) !== value) this.journal.setSetting(name, value);
  }
}

function toVersion(row: VersionRow): Version {
  return {
    id: String(row.id),
    operation: row.op,
    at: new Date(row.at).toISOString(),
    size: row.size,
    sha256: row.sha256,
    actor: row.actor,
    redacted: row.blob === null,
  };
}
