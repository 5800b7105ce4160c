import { DurableObject } from "cloudflare:workers";
import type { GrantRequest } from "../shared/grant-request.ts";
import { childRoot, MAX_KEY_BYTES, parseRelPath, type RelPath, utf8Length } from "../shared/rel-path.ts";
import { type CapFailure, fail, ok, type Result, refuseBody } from "../shared/result.ts";
import { isSubset, type Right } from "../shared/rights.ts";
import { digestToken, mintToken } from "../shared/token.ts";
import type { Backend } from "../shared/wire-types.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import type {
  ListEntry,
  ReadOptions,
  ReadOutcome,
  Root,
  StatOutcome,
  StorageAdapter,
  WriteOutcome,
} from "../storage-adapters/storage-adapter.ts";
import { DEFAULT_CONTENT_TYPE } from "../storage-adapters/storage-adapter.ts";
import { type AuditEntry, AuditLog, KEEP_DONE, KEEP_REFUSED } from "./audit-log.ts";
import type { CapEnv } from "./cap-env.ts";
import {
  type CapInfo,
  type CapRecord,
  type CapRef,
  type ChildRecord,
  isoOrNull,
  type MintedCap,
  type Tombstone,
} from "./cap-record.ts";
import { addChild, CHILD, chunks, removeChild } from "./child-index.ts";
import { type ChildPage, childPage } from "./child-page.ts";
import { entriesFor, etagConditionWithoutRead, statFor } from "./content-hints.ts";
import { decodeCursor, encodeCursor, parseLimit } from "./list-cursor.ts";
import { revokeChildren } from "./revocation-cascade.ts";

const RECORD = "cap";
const TOMBSTONE = "tombstone";
const DEFAULT_MAX_FILE_BYTES = 100 * 1024 * 1024;
/** How soon an unfinished revocation cascade is retried. */
const RETRY_MS = 5_000;
/** setTimeout's largest delay; longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Refusals worth an audit line even on read-only operations: someone tried to reach past the cap. */
export const AUDITED_REFUSALS: ReadonlySet<string> = new Set([
  "forbidden",
  "path_escapes",
  "absolute_path",
  "invalid_path",
  "outside_root",
]);

export interface WriteRequest {
  /** The request's Content-Length; bodies of unknown length are refused before they get here. */
  length: number;
  contentType: string | null;
  ifMatch?: string | undefined;
  ifNoneMatch?: string | undefined;
}

/** What the worker needs to perform one read the cap object decided: see {@link CapObject.grantRead}. */
export interface ReadGrant {
  backend: Backend;
  root: Root;
  path: RelPath;
}

export interface RevokeOutcome {
  /** Descendants not yet reached; their revocation is finished by alarms. */
  pending: number;
}

export interface ListResult {
  entries: ListEntry[];
  cursor: string | null;
}

/**
 * One capability. This object is the single chokepoint for its authority:
 * every request is checked here for liveness (not revoked, not expired),
 * rights and path, in that order, before storage is touched; the root prefix
 * never leaves it except towards the storage adapter.
 *
 * Every public method returns a {@link Result} rather than throwing (see
 * shared/result.ts); `worker/http-error.ts` maps failures to HTTP.
 */
export class CapObject extends DurableObject<CapEnv> {
  private readonly audit = new AuditLog(this.ctx.storage.sql);
  /**
   * Transfers and mutations running through this cap. Authority is checked
   * when an operation starts, so revocation must also stop the ones already
   * running: it aborts their streams and waits for them, and only then
   * answers, so nothing lands through a cap after its revocation returned.
   */
  private readonly running = new Set<{ abort: AbortController; settled: Promise<unknown> }>();

  // ---- lifecycle -------------------------------------------------------

  /** Called once by whoever mints this cap; refuses to overwrite a live record. */
  async init(record: CapRecord): Promise<Result<null>> {
    if (await this.ctx.storage.get(RECORD)) return fail("conflict", "cap already exists");
    await this.ctx.storage.put(RECORD, record);
    if (record.expiresAt !== null) await this.ctx.storage.setAlarm(record.expiresAt);
    return ok(null);
  }

  async describe(): Promise<Result<CapInfo>> {
    const cap = await this.live();
    if (!cap) return noSuchCap();
    return ok({
      id: cap.id,
      rights: cap.rights,
      label: cap.label,
      createdAt: new Date(cap.createdAt).toISOString(),
      expiresAt: isoOrNull(cap.expiresAt),
      parent: cap.parent?.id ?? null,
    });
  }

  /** The holder revokes this cap: it and every descendant, then its parent forgets it. */
  async revoke(): Promise<Result<RevokeOutcome>> {
    const cap = await this.live();
    if (!cap) return noSuchCap();
    const outcome = await this.cascade();
    if (cap.parent) {
      // Best effort: a parent that missed this still lists a dead child until
      // it is asked to revoke it, which then finds nothing and succeeds.
      await this.capStub(cap.parent.key)
        .forgetChild(cap.id)
        .catch(() => null);
    } else {
      await this.registry()
        .forgetRoot(cap.id)
        .catch(() => null);
    }
    return ok(outcome);
  }

  /** A parent (or the registry) revokes this subtree. Idempotent: a dead cap succeeds at once. */
  async revokeSubtree(): Promise<Result<RevokeOutcome>> {
    return ok(await this.cascade());
  }

  async forgetChild(id: string): Promise<null> {
    await removeChild(this.ctx.storage, id);
    return null;
  }

  override async alarm(): Promise<void> {
    const cap = await this.ctx.storage.get<CapRecord>(RECORD);
    // No record: a revocation left work (a tombstone, unreached children); finish it.
    if (!cap) {
      await this.cascade();
      return;
    }
    if (cap.expiresAt !== null && Date.now() >= cap.expiresAt) {
      // Descendants expire no later than this cap, by their own clocks and
      // alarms. Uploads were cut at expiresAt by their timers; stop any the
      // timer missed before the state goes, so none lands after expiry.
      await this.stopRunning();
      await this.ctx.storage.deleteAll();
    } else if (cap.expiresAt !== null) {
      await this.ctx.storage.setAlarm(cap.expiresAt);
    }
  }

  // ---- files -----------------------------------------------------------

  async readFile(rawPath: string | null, options: ReadOptions): Promise<Result<ReadOutcome>> {
    return this.audited("read", rawPath, false, () => this.readUnaudited(rawPath, options));
  }

  /**
   * Decides a read (alive, the read right, the path) and hands the worker
   * what it needs to perform it for this one request, so the bytes go from
   * storage to the client without crossing this object. The grant never
   * leaves the worker: the root stays out of every answer. Revocation
   * guarantees what it did for reads performed here: a read asked after
   * revocation answered is refused; one already granted may still run, as a
   * download already streaming may finish (see readUnaudited).
   */
  async grantRead(rawPath: string | null): Promise<Result<ReadGrant>> {
    return this.audited("read", rawPath, false, async () => {
      const access = await this.authorize(["read"], rawPath);
      if (!access.ok) return access;
      const { cap, path } = access.value;
      return ok({ backend: cap.backend, root: cap.root, path });
    });
  }

  /** The worker's granted read was refused by storage: audit it as a refusal of {@link readFile} would be. */
  async auditReadRefusal(rawPath: string | null, refusal: CapFailure): Promise<null> {
    if (AUDITED_REFUSALS.has(refusal.code))
      await this.recordIfLive("read", rawPath, { ok: false, error: refusal }, false, null);
    return null;
  }

  private async readUnaudited(rawPath: string | null, options: ReadOptions): Promise<Result<ReadOutcome>> {
    const access = await this.authorize(["read"], rawPath);
    if (!access.ok) return access;
    const { cap, path, storage } = access.value;
    // A download already streaming when the cap is revoked is left to finish:
    // it reveals nothing the holder could not read a moment before, and
    // passing every read through a guard stream cost 3x in throughput.
    return storage.read(cap.root, path, options);
  }

  async writeFile(
    rawPath: string | null,
    body: ReadableStream<Uint8Array>,
    request: WriteRequest,
  ): Promise<Result<WriteOutcome>> {
    return this.audited("write", rawPath, true, () => this.writeUnaudited(rawPath, body, request));
  }

  private async writeUnaudited(
    rawPath: string | null,
    body: ReadableStream<Uint8Array>,
    request: WriteRequest,
  ): Promise<Result<WriteOutcome>> {
    const access = await this.authorize(["write"], rawPath);
    if (!access.ok) return refuseBody(body, access, request.length);
    const { cap, path, storage } = access.value;
    if (etagConditionWithoutRead(cap.rights, request))
      return refuseBody(body, fail("forbidden", "a condition on an etag needs the read right"), request.length);
    if (request.length > this.maxFileBytes()) {
      return refuseBody(body, fail("too_large", `files are limited to ${this.maxFileBytes()} bytes`), request.length);
    }
    const written = await this.revocable(cap.expiresAt, async (signal) =>
      storage.write(cap.root, path, cutOnAbort(body, signal, cap.expiresAt), {
        length: request.length,
        contentType: request.contentType ?? DEFAULT_CONTENT_TYPE,
        ifMatch: request.ifMatch,
        ifNoneMatch: request.ifNoneMatch,
      }),
    );
    // A write cut short by revocation stored nothing; say so as the cap would now.
    if (!written.ok && !(await this.live())) return noSuchCap();
    return written;
  }

  async deleteFile(rawPath: string | null): Promise<Result<null>> {
    return this.audited("delete", rawPath, true, async () => {
      const access = await this.authorize(["delete"], rawPath);
      if (!access.ok) return access;
      const { cap, path, storage } = access.value;
      // Nothing to cut, but revocation waits for it, so it cannot land after.
      return this.revocable(cap.expiresAt, () => storage.remove(cap.root, path));
    });
  }

  async statPath(rawPath: string | null): Promise<Result<StatOutcome>> {
    return this.audited("stat", rawPath, false, async () => {
      const access = await this.authorize(["read", "list"], rawPath, { any: true, rootAllowed: true });
      if (!access.ok) return access;
      const { cap, path, storage } = access.value;
      const stat = await storage.stat(cap.root, path);
      return stat.ok ? ok(statFor(cap.rights, stat.value)) : stat;
    });
  }

  async listDir(
    rawPath: string | null,
    rawCursor: string | null,
    rawLimit: string | null,
  ): Promise<Result<ListResult>> {
    return this.audited("list", rawPath, false, () => this.listUnaudited(rawPath, rawCursor, rawLimit));
  }

  private async listUnaudited(
    rawPath: string | null,
    rawCursor: string | null,
    rawLimit: string | null,
  ): Promise<Result<ListResult>> {
    const access = await this.authorize(["list"], rawPath, { rootAllowed: true });
    if (!access.ok) return access;
    const { cap, path, storage } = access.value;
    const limit = parseLimit(rawLimit);
    if (!limit.ok) return limit;
    const after = decodeCursor(rawCursor);
    if (!after.ok) return after;
    const page = await storage.list(cap.root, path, { after: after.value, limit: limit.value });
    if (!page.ok) return page;
    return ok({
      entries: entriesFor(cap.rights, page.value.entries),
      cursor: page.value.next === null ? null : encodeCursor(page.value.next),
    });
  }

  async movePath(rawFrom: string | null, rawTo: string | null, overwrite: boolean): Promise<Result<null>> {
    return this.audited("move", `${rawFrom ?? ""} -> ${rawTo ?? ""}`, true, async () => {
      const access = await this.authorize(["write", "delete"], rawFrom);
      if (!access.ok) return access;
      const { cap, path: from, storage } = access.value;
      const to = this.parseFilePath(rawTo);
      if (!to.ok) return to;
      return this.revocable(cap.expiresAt, () => storage.move(cap.root, from, to.value, overwrite));
    });
  }

  // ---- delegation ------------------------------------------------------

  /** Mints a child cap: a subtree (or the same root) with no more rights and no later expiry. */
  async mintChild(request: GrantRequest, origin: string): Promise<Result<MintedCap>> {
    const minted = await this.mintUnaudited(request, origin);
    await this.recordIfLive("subdir", request.path, minted, true, minted.ok ? minted.value.id : null);
    return minted;
  }

  private async mintUnaudited(request: GrantRequest, origin: string): Promise<Result<MintedCap>> {
    const access = await this.authorize(["subdir"], request.path, { rootAllowed: true });
    if (!access.ok) return access;
    const { cap, path, storage } = access.value;
    const rights = request.rights ?? cap.rights;
    if (!isSubset(rights, cap.rights)) return fail("forbidden", "a child cannot hold rights its parent lacks");
    const root = path.text === "" ? cap.root : [...cap.root, childRoot("", path)];
    if (utf8Length(root.join("")) >= MAX_KEY_BYTES) return fail("invalid_path", "path too long");
    const prepared = await storage.prepareRoot(root, { create: false });
    if (!prepared.ok) return prepared;

    const now = Date.now();
    const requested = request.ttlSeconds === null ? null : now + request.ttlSeconds * 1000;
    const expiresAt = cap.expiresAt === null ? requested : Math.min(requested ?? Infinity, cap.expiresAt);
    const minted = await mintToken(this.env.CAPVAULT_TOKEN_KEY);
    if (!minted.ok) return minted;
    const token = minted.value;
    const { key, id } = await digestToken(token);
    const child: ChildRecord = { id, key, label: request.label, path: path.text, rights, createdAt: now, expiresAt };

    // Record the child before it exists, so a revocation that interleaves
    // with this mint (the input gate opens at every await) already sees it.
    const added = await addChild(this.ctx.storage, child);
    if (!added.ok) return added;
    const stub = this.capStub(key);
    const made = await stub.init({
      id,
      key,
      backend: cap.backend,
      root,
      rights,
      label: request.label,
      createdAt: now,
      expiresAt,
      parent: { id: cap.id, key: cap.key },
    });
    if (!made.ok) return made;
    if (!(await this.live())) {
      // Revoked while the child was being made: the cascade may have run
      // before the child's init landed, so revoke it again ourselves, and
      // leave it to the alarm if even that fails.
      const undone = await stub.revokeSubtree().catch(() => null);
      if (!undone?.ok) {
        // The child's record is what the alarm's cascade walks.
        const earlier = await this.ctx.storage.get<Tombstone>(TOMBSTONE);
        await this.ctx.storage.put({
          [CHILD + id]: { id, key },
          [TOMBSTONE]: { pending: [], parent: earlier?.parent ?? null } satisfies Tombstone,
        });
        await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
      }
      return noSuchCap();
    }
    return ok({ token, url: `${origin}/object/${token}`, id, rights, expiresAt: isoOrNull(expiresAt) });
  }

  async listChildren(rawCursor: string | null = null, rawLimit: string | null = null): Promise<Result<ChildPage>> {
    const cap = await this.live();
    if (!cap) return noSuchCap();
    if (!cap.rights.includes("subdir")) return fail("forbidden", "listing children needs the subdir right");
    return childPage(this.ctx.storage, rawCursor, rawLimit);
  }

  async revokeChild(id: string): Promise<Result<RevokeOutcome>> {
    const cap = await this.live();
    if (!cap) return noSuchCap();
    if (!cap.rights.includes("subdir")) return fail("forbidden", "revoking children needs the subdir right");
    const child = typeof id === "string" ? await this.ctx.storage.get<ChildRecord>(CHILD + id) : undefined;
    if (!child || (child.expiresAt !== null && child.expiresAt <= Date.now()))
      return fail("not_found", "no such child");
    const outcome = await this.capStub(child.key)
      .revokeSubtree()
      .catch(() => fail<RevokeOutcome>("unavailable"));
    if (!outcome.ok) return outcome;
    await removeChild(this.ctx.storage, id);
    await this.recordIfLive("revoke_child", child.path, outcome, true, child.id);
    return outcome;
  }

  /** The newest audit lines of this cap, newest first. Needs no right: it is the holder's own history. */
  async auditTrail(rawLimit: string | null): Promise<Result<{ entries: AuditEntry[] }>> {
    if (!(await this.live())) return noSuchCap();
    // Every kept line fits in one answer.
    const limit = parseLimit(rawLimit, KEEP_DONE + KEEP_REFUSED);
    if (!limit.ok) return limit;
    return ok({ entries: this.audit.recent(limit.value) });
  }

  // ---- internals -------------------------------------------------------

  /**
   * Runs an operation and writes its audit line: every mutation, and every
   * refusal that shows someone reaching past the cap. Dead caps keep no log.
   */
  /**
   * Runs a mutation that revocation may abort, and that revocation waits for.
   * Expiry is revocation by the clock: a timer aborts it at `expiresAt`, so
   * an upload that began before is cut even if no alarm ever runs.
   */
  private async revocable<T>(expiresAt: number | null, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    const delay = expiresAt === null ? Infinity : Math.max(0, expiresAt - Date.now());
    // Longer delays overflow setTimeout (firing at once); cutOnAbort's deadline covers them.
    const timer = delay <= MAX_TIMER_MS ? setTimeout(() => abort.abort(), delay) : null;
    const settled = run(abort.signal);
    const entry = { abort, settled: settled.catch(() => undefined) };
    this.running.add(entry);
    try {
      return await settled;
    } finally {
      if (timer !== null) clearTimeout(timer);
      this.running.delete(entry);
    }
  }

  /** Aborts every mutation running through this cap and waits until each has settled. */
  private async stopRunning(): Promise<void> {
    const stopping = [...this.running];
    for (const op of stopping) op.abort.abort();
    await Promise.all(stopping.map((op) => op.settled));
  }

  private async audited<T>(
    op: string,
    rawPath: string | null,
    mutation: boolean,
    run: () => Promise<Result<T>>,
  ): Promise<Result<T>> {
    const result = await run();
    await this.recordIfLive(op, rawPath, result, mutation, null);
    return result;
  }

  private async recordIfLive(
    op: string,
    path: string | null,
    result: Result<unknown>,
    mutation: boolean,
    child: string | null,
  ): Promise<void> {
    if (!result.ok && result.error.code === "no_such_cap") return;
    // Most reads leave no line: no storage read for them.
    if (!mutation && (result.ok || !AUDITED_REFUSALS.has(result.error.code))) return;
    // Revoked while the operation ran: a dead cap keeps no log.
    if (!(await this.live())) return;
    this.audit.record(op, path, result, child);
  }

  /** The live record, or `null` when revoked, expired or never minted. */
  private async live(): Promise<CapRecord | null> {
    const cap = await this.ctx.storage.get<CapRecord>(RECORD);
    if (!cap) return null;
    if (cap.expiresAt !== null && Date.now() >= cap.expiresAt) return null;
    return cap;
  }

  /**
   * The chokepoint: liveness, then rights, then the path. Nothing reaches
   * storage without passing all three.
   */
  private async authorize(
    needed: Right[],
    rawPath: string | null,
    options: { any?: boolean; rootAllowed?: boolean } = {},
  ): Promise<Result<{ cap: CapRecord; path: RelPath; storage: StorageAdapter }>> {
    const cap = await this.live();
    if (!cap) return noSuchCap();
    const allowed = options.any
      ? needed.some((r) => cap.rights.includes(r))
      : needed.every((r) => cap.rights.includes(r));
    if (!allowed)
      return fail("forbidden", `this operation needs the ${needed.join(options.any ? " or " : " and ")} right`);
    const path = options.rootAllowed ? parseRelPath(rawPath) : this.parseFilePath(rawPath);
    if (!path.ok) return path;
    const storage = selectStorage(this.env, cap.backend);
    if (!storage) return fail("unavailable", "this cap's storage backend is not configured here");
    return ok({ cap, path: path.value, storage });
  }

  private parseFilePath(rawPath: string | null): Result<RelPath> {
    const path = parseRelPath(rawPath);
    if (path.ok && path.value.segments.length === 0) return fail("invalid_path", "a file operation needs a file name");
    return path;
  }

  /**
   * Kills this cap and its subtree. The record goes first, in one synchronous
   * step, so from that instant every request here answers `no_such_cap`. Then
   * it stops what is running here and revokes the children in bounded
   * batches; children not reached keep their records under a tombstone, and
   * an alarm retries them. It answers only once every upload through this
   * cap has settled, so nothing lands after a revocation returned, even when
   * the record was already gone (expired, or a second revocation).
   */
  private async cascade(): Promise<RevokeOutcome> {
    const cap = await this.ctx.storage.get<CapRecord>(RECORD);
    const earlier = await this.ctx.storage.get<Tombstone>(TOMBSTONE);
    const leaf = (await this.ctx.storage.list({ prefix: CHILD, limit: 1 })).size === 0 && !earlier?.pending?.length;
    if (leaf) {
      // Nothing to reach below: one step kills and clears it (deleteAll is the first write).
      if (cap || earlier || this.running.size > 0) {
        await this.ctx.storage.deleteAll();
        await this.ctx.storage.deleteAlarm();
      }
      await this.stopRunning();
      return { pending: 0 };
    }
    const tombstone: Tombstone = { pending: [], parent: cap?.parent ?? earlier?.parent ?? null };
    await this.ctx.storage.delete(RECORD);
    await this.ctx.storage.put(TOMBSTONE, tombstone);
    // Older tombstones listed unreached children; they now stay as child records.
    const legacy = (earlier?.pending ?? []).map((ref): [string, CapRef] => [CHILD + ref.id, ref]);
    for (const batch of chunks(legacy, 128)) await this.ctx.storage.put(Object.fromEntries(batch));
    this.audit.clear();
    await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);

    const [pending] = await Promise.all([
      revokeChildren(this.ctx.storage, (ref) => this.capStub(ref.key).revokeSubtree()),
      this.stopRunning(),
    ]);
    // A mint that raced this revocation and could not undo its child records
    // it here for the alarm: never clear a record nobody has reached.
    const left = (await this.ctx.storage.list({ prefix: CHILD, limit: 1 })).size;
    if (pending === 0 && left === 0) {
      await this.ctx.storage.deleteAll();
      await this.ctx.storage.deleteAlarm();
    } else {
      await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
    }
    return { pending: Math.max(pending, left) };
  }

  private capStub(key: string): DurableObjectStub<CapObject> {
    return this.env.CAPS.get(this.env.CAPS.idFromName(key));
  }

  private registry() {
    return this.env.ROOTS.get(this.env.ROOTS.idFromName("registry"));
  }

  private maxFileBytes(): number {
    const configured = Number(this.env.CAPVAULT_MAX_FILE_BYTES);
    return Number.isSafeInteger(configured) && configured > 0 ? configured : DEFAULT_MAX_FILE_BYTES;
  }
}

function noSuchCap<T>(): Result<T> {
  return fail("no_such_cap");
}

/**
 * Passes a stream through, erroring it at once when `signal` aborts, even
 * while a read is pending, or at its end if `deadline` has passed: storage
 * then sees a failed body and stores nothing (R2 puts and disk renames are
 * all or nothing).
 */
function cutOnAbort(
  source: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  deadline: number | null,
): ReadableStream<Uint8Array> {
  let controller!: TransformStreamDefaultController<Uint8Array>;
  const guard = new TransformStream<Uint8Array, Uint8Array>({
    start(c) {
      controller = c;
    },
    // A body that completes after expiry (its timer late or never set) is refused whole.
    flush() {
      if (deadline !== null && Date.now() >= deadline) throw new Error("expired");
    },
  });
  const cut = () => controller.error(new Error("revoked"));
  signal.addEventListener("abort", cut, { once: true });
  source
    .pipeTo(guard.writable)
    .catch(() => undefined)
    .finally(() => signal.removeEventListener("abort", cut));
  return guard.readable;
}
