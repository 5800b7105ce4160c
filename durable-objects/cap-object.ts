import { DurableObject } from "cloudflare:workers";
import type { GrantRequest } from "../shared/grant-request.ts";
import { effectiveLimits } from "../shared/quota.ts";
import { refuse } from "../shared/refusals.ts";
import { type CapFailure, ok, type Result } from "../shared/result.ts";
import type {
  AuditEntry,
  CapInfo,
  CapTree,
  ChildPage,
  ListPage,
  MintedCap,
  Stat,
  WriteResult,
} from "../shared/wire-types.ts";
import { checkR2Format, r2FormatChecked } from "../storage-adapters/r2-format.ts";
import type { ReadOutcome, StorageReadOptions } from "../storage-adapters/storage-adapter.ts";
import { AuditLog, type AuditRow } from "./audit-log.ts";
import { CapAudit } from "./cap-audit.ts";
import { CapAuthorize, noSuchCap, RECORD } from "./cap-authorize.ts";
import { CapChildren } from "./cap-children.ts";
import { CapDavLocks, type DavLock, type LockRequest } from "./cap-dav-locks.ts";
import { CapDavProps, type DeadProp, type PatchOutcome, type PropOp } from "./cap-dav-props.ts";
import { CapFiles, type ReadGrant, type WriteFileHeaders } from "./cap-files.ts";
import type { StorageGrant } from "./cap-grant.ts";
import { CapHistory } from "./cap-history.ts";
import { capHost } from "./cap-host.ts";
import { CapMcpSessions, type SubscribeOutcome } from "./cap-mcp-sessions.ts";
import { CAP_MIGRATIONS } from "./cap-migrations.ts";
import { CapMint } from "./cap-mint.ts";
import { quotaInfo } from "./cap-quota.ts";
import { type CapRecord, type ChildRecord, isoOrNull } from "./cap-record.ts";
import { CapRevocation, type RevokeOutcome } from "./cap-revocation.ts";
import { grantSearch } from "./cap-search.ts";
import { CapTransfer } from "./cap-transfer.ts";
import type { VersionBody } from "./cap-versions.ts";
import type { WatchSocketGrant } from "./cap-watch-socket.ts";
import type { DelegationChild } from "./delegation-tree.ts";
import { type HolderAdmission, HolderProofs } from "./holder-binding.ts";

import type { CapExport } from "./import-check.ts";

import { type AdoptOutcome, type LegacyChildren, type LegacyRecord, legacyObject } from "./legacy-reissue.ts";

import type { ObjectEnv } from "./object-env.ts";
import { blockedBy, migrateOnWake, type Refused, stampFormat } from "./state-migrations.ts";

export { AUDITED_REFUSALS } from "./cap-audit.ts";
export type { ReadGrant, RevokeOutcome, WriteFileHeaders };

/** Methods a request's first call through {@link CapObject.withHolder} may never be: lifecycle and the admission itself. */
const NOT_A_REQUEST_CALL = new Set([
  "constructor",
  "init",
  "alarm",
  "fetch",
  "admitHolder",
  "withHolder",
  "exportState",
  "stageImport",
  "stageImportPage",
  "commitImport",
  "legacyRecord",
  "legacyChildren",
  "adoptReissued",
  "adoptReissuedChild",
  "retireLegacy",
]);

/**
 * One capability, as a Durable Object: its RPC surface, each method handed to
 * the module that does that job. Every request passes the one chokepoint
 * (cap-authorize.ts: liveness, rights, path) before storage is touched, and
 * every audited one passes the one audit (cap-audit.ts); the root prefix never
 * leaves the object except towards the storage adapter. Files are
 * cap-files.ts, history and watches cap-history.ts, minting cap-mint.ts, the
 * caps below cap-children.ts, revocation and expiry cap-revocation.ts.
 *
 * Every public method returns a {@link Result} rather than throwing (see
 * shared/result.ts); `worker/http-error.ts` maps failures to HTTP.
 */
export class CapObject extends DurableObject<ObjectEnv> {
  /** The env is read through on every use (cap-host.ts): the modules never keep a copy of their own. */
  private readonly host = capHost(this.ctx.storage, () => this.env);
  private readonly gate = new CapAuthorize(this.host);
  private readonly log = new AuditLog(this.ctx.storage.sql);
  private readonly audit = new CapAudit(this.log, this.gate);
  private readonly revocation = new CapRevocation(this.host, this.gate, this.log);
  private readonly files = new CapFiles(this.host, this.gate, this.audit, this.revocation);
  private readonly history = new CapHistory(this.host, this.gate, this.audit, this.files, this.revocation);
  private readonly minting = new CapMint(this.host, this.gate, this.audit, this.revocation);
  private readonly children = new CapChildren(this.host, this.gate, this.audit);
  /** holder binding (issue 20): the jtis of this cap's DPoP proofs (holder-binding.ts). */
  private readonly holderProofs = new HolderProofs(this.ctx.storage);
  /** WebDAV locks (worker/dav/): bounded in count and life (cap-dav-locks.ts). */
  private readonly davLocks = new CapDavLocks(this.host, this.gate);
  /** WebDAV dead properties (issue 26): bounded per resource and per cap (cap-dav-props.ts). */
  private readonly davProps = new CapDavProps(this.host, this.gate);
  /** Vault export and import (docs/export-import.md): the admin's routes reach it through the registry only. */
  private readonly transfer = new CapTransfer(this.host, this.gate, this.log, this.revocation);
  /** 2025-era MCP sessions' resource subscriptions (worker/mcp/mcp-subscriptions.ts): in memory, bounded. */
  private readonly mcpSessions = new CapMcpSessions(this.gate);
  /**
   * The refusal every call answers when this object's state could not be
   * brought to this build's format: newer than the build (never written to),
   * or a migration that failed (rolled back whole). `null`: the state is current.
   */
  #blocked: Refused | null;

  constructor(ctx: DurableObjectState, env: ObjectEnv) {
    super(ctx, env);
    // Before any request: synchronous storage only, so nothing interleaves (state-migrations.ts).
    const wake = migrateOnWake(ctx.storage, "cap", CAP_MIGRATIONS, { stampEmpty: false });
    this.#blocked = blockedBy(wake);
    // A cap with state reaches the bucket: its layout's format too, once per isolate (r2-format.ts).
    if (wake.ok && wake.value.from !== null && !r2FormatChecked())
      void ctx.blockConcurrencyWhile(async () => {
        this.#blocked = blockedBy(await checkR2Format(env.BUCKET));
      });
  }

  // ---- lifecycle -------------------------------------------------------

  /**
   * Called once by whoever mints this cap; refuses to overwrite a live record,
   * and to come alive once a revocation has reached this key (a tombstone):
   * the parent's cascade may reach a child between the parent indexing it and
   * this init landing, and then drops it from its index; a cap made after
   * that would be live and listed nowhere if the minting parent never got to
   * undo it (its own answer lost, or its object reset).
   */
  async init(record: CapRecord): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    if (await this.ctx.storage.get(RECORD)) return refuse("capExists");
    if (await this.revocation.tombstoned()) return refuse("capExists");
    // A new cap's object woke empty, with no format: its first write says which (state-migrations.ts).
    stampFormat(this.ctx.storage, "cap");
    await this.ctx.storage.put(RECORD, record);
    if (record.expiresAt !== null) await this.ctx.storage.setAlarm(record.expiresAt);
    return ok(null);
  }

  /** `withUsage`: also the usage of the cap's subtree, a call to its root's journal (`GET /object/<token>`). */
  async describe(withUsage = false): Promise<Result<CapInfo>> {
    if (this.#blocked) return this.#blocked;
    const cap = await this.gate.live();
    if (!cap) return noSuchCap();
    const quota = withUsage ? await quotaInfo(this.env, cap) : { limits: effectiveLimits(cap.quotas) };
    // Revoked while the journal answered: say so as a dead cap does.
    if (withUsage && !(await this.gate.live())) return noSuchCap();
    return ok({
      id: cap.id,
      rights: cap.rights,
      label: cap.label,
      createdAt: new Date(cap.createdAt).toISOString(),
      expiresAt: isoOrNull(cap.expiresAt),
      parent: cap.parent?.id ?? null,
      holder: cap.holder ?? null, // holder binding (issue 20)
      ...quota,
    });
  }

  /** The holder revokes this cap: it and every descendant, then its parent forgets it. */
  async revoke(): Promise<Result<RevokeOutcome>> {
    if (this.#blocked) return this.#blocked;
    return this.revocation.revoke();
  }

  /** A parent (or the registry) revokes this subtree. Idempotent: a dead cap succeeds at once. */
  async revokeSubtree(): Promise<Result<RevokeOutcome>> {
    if (this.#blocked) return this.#blocked;
    return ok(await this.revocation.cascade());
  }

  async forgetChild(id: string): Promise<null> {
    if (this.#blocked) return null;
    return this.children.forgetChild(id);
  }

  /** Expiry, and the retries of an unfinished revocation (cap-revocation.ts). */
  override async alarm(): Promise<void> {
    if (this.#blocked) return;
    await this.revocation.alarm();
  }

  // ---- files (cap-files.ts) ---------------------------------------------

  async readFile(rawPath: string | null, options: StorageReadOptions): Promise<Result<ReadOutcome>> {
    if (this.#blocked) return this.#blocked;
    return this.files.readFile(rawPath, options);
  }

  /** Decides a read and hands the worker what it needs to perform it (see {@link CapFiles.grantRead}). */
  async grantRead(rawPath: string | null): Promise<Result<ReadGrant>> {
    if (this.#blocked) return this.#blocked;
    return this.files.grantRead(rawPath);
  }

  /** The worker's granted read was refused by storage: audit it as a refusal of {@link readFile} would be. */
  async auditReadRefusal(rawPath: string | null, refusal: CapFailure): Promise<null> {
    if (this.#blocked) return null;
    return this.files.auditReadRefusal(rawPath, refusal);
  }

  async writeFile(
    rawPath: string | null,
    body: ReadableStream<Uint8Array>,
    request: WriteFileHeaders,
  ): Promise<Result<WriteResult>> {
    if (this.#blocked) return this.#blocked;
    return this.files.writeFile(rawPath, body, request);
  }

  async deleteFile(rawPath: string | null): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.files.deleteFile(rawPath);
  }

  async statPath(rawPath: string | null): Promise<Result<Stat>> {
    if (this.#blocked) return this.#blocked;
    return this.files.statPath(rawPath);
  }

  /** Makes a folder that stays while empty: MCP's `create_directory` (see {@link CapFiles.makeFolder}). */
  async makeFolder(rawPath: string | null): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.files.makeFolder(rawPath);
  }

  /** Removes an empty folder (see {@link CapFiles.removeFolder}). */
  async removeFolder(rawPath: string | null): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.files.removeFolder(rawPath);
  }

  async listDir(
    rawPath: string | null,
    rawCursor: string | null,
    rawLimit: string | null,
    rawDepth: string | null = null,
  ): Promise<Result<ListPage>> {
    if (this.#blocked) return this.#blocked;
    return this.files.listDir(rawPath, rawCursor, rawLimit, rawDepth);
  }

  async movePath(rawFrom: string | null, rawTo: string | null, overwrite: boolean): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.files.movePath(rawFrom, rawTo, overwrite);
  }

  /** Decides a content search and hands the worker the folder to scan (cap-search.ts). */
  async grantSearch(rawPath: string | null): Promise<Result<StorageGrant>> {
    if (this.#blocked) return this.#blocked;
    return grantSearch(this.gate, this.audit, rawPath);
  }

  // ---- versions and watches (cap-history.ts) ------------------------------

  async listVersions(rawPath: string | null, rawCursor: string | null, rawLimit: string | null) {
    if (this.#blocked) return this.#blocked;
    return this.history.listVersions(rawPath, rawCursor, rawLimit);
  }

  async readVersion(rawId: string): Promise<Result<VersionBody>> {
    if (this.#blocked) return this.#blocked;
    return this.history.readVersion(rawId);
  }

  /** Writes a version's bytes back to its path through the normal write path, and answers that path. */
  async restoreVersion(rawId: string): Promise<Result<WriteResult & { path: string }>> {
    if (this.#blocked) return this.#blocked;
    return this.history.restoreVersion(rawId);
  }

  /** The change feed of this cap's subtree, from the root's journal; closed when the cap is revoked or expires. */
  async watch(rawSince: string | null): Promise<Result<ReadableStream<Uint8Array>>> {
    if (this.#blocked) return this.#blocked;
    return this.history.watch(rawSince);
  }

  /** A WebSocket watcher of this cap's subtree, for the worker to hand to the root's journal (cap-watch-socket.ts). */
  async watchSocket(rawSince: string | null): Promise<Result<WatchSocketGrant>> {
    if (this.#blocked) return this.#blocked;
    return this.history.watchSocket(rawSince);
  }

  async redactVersion(rawId: string): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.history.redactVersion(rawId);
  }

  // ---- MCP resource subscriptions (cap-mcp-sessions.ts) --------------------

  async mcpSubscribe(session: string, rawPath: string, uri: string): Promise<Result<SubscribeOutcome>> {
    if (this.#blocked) return this.#blocked;
    return this.mcpSessions.subscribe(session, rawPath, uri);
  }

  async mcpUnsubscribe(session: string, uri: string): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.mcpSessions.unsubscribe(session, uri);
  }

  /** The watch feed of a 2025-era MCP session's GET stream, cut to what it subscribed to. */
  async mcpSessionFeed(session: string, rawSince: string | null): Promise<Result<ReadableStream<Uint8Array>>> {
    if (this.#blocked) return this.#blocked;
    const feed = await this.history.watch(rawSince);
    return feed.ok ? ok(this.mcpSessions.feed(session, feed.value)) : feed;
  }

  // ---- delegation (cap-mint.ts, cap-children.ts) --------------------------

  /** Mints a child cap: a subtree (or the same root) with no more rights and no later expiry. */
  async mintChild(request: GrantRequest, origin: string): Promise<Result<MintedCap>> {
    if (this.#blocked) return this.#blocked;
    return this.minting.mintChild(request, origin);
  }

  async listChildren(rawCursor: string | null = null, rawLimit: string | null = null): Promise<Result<ChildPage>> {
    if (this.#blocked) return this.#blocked;
    return this.children.listChildren(rawCursor, rawLimit);
  }

  /** The delegation tree below this cap, ids only, within fixed bounds (durable-objects/delegation-tree.ts). */
  async tree(): Promise<Result<CapTree>> {
    if (this.#blocked) return this.#blocked;
    return this.children.tree();
  }

  /** Revokes a cap anywhere below this one (as far as `tree` reaches), with its subtree. */
  async revokeDescendant(id: string): Promise<Result<RevokeOutcome>> {
    if (this.#blocked) return this.#blocked;
    return this.children.revokeDescendant(id);
  }

  /** For an ancestor's tree walk only (objects call it, no route does): a dead cap has no children. */
  async delegationChildren(limit: number): Promise<Result<DelegationChild[]>> {
    if (this.#blocked) return this.#blocked;
    return this.children.delegationChildren(limit);
  }

  async revokeChild(id: string): Promise<Result<RevokeOutcome>> {
    if (this.#blocked) return this.#blocked;
    return this.children.revokeChild(id);
  }

  /** The newest audit lines of this cap, newest first. Needs no right: it is the holder's own history. */
  async auditTrail(rawLimit: string | null): Promise<Result<{ entries: AuditEntry[] }>> {
    if (this.#blocked) return this.#blocked;
    return this.audit.trail(rawLimit);
  }

  // ---- vault export and import (cap-transfer.ts) ---------------------------

  /** For an admin export only (no cap route calls it): record, children and audit in one moment; null when dead. */
  async exportState(): Promise<Result<CapExport | null>> {
    if (this.#blocked) return this.#blocked;
    return this.transfer.exportState();
  }

  /** For an admin import only: stores the cap staged, not live, until the registry's commit. */
  async stageImport(state: unknown): Promise<Result<"staged" | "live">> {
    if (this.#blocked) return this.#blocked;
    return this.transfer.stage(state);
  }

  /** For an admin import only: the rest of the staged cap's children and audit (a cap too large for one call). */
  async stageImportPage(page: unknown): Promise<Result<{ children: number; audit: number }>> {
    if (this.#blocked) return this.#blocked;
    return this.transfer.stagePage(page);
  }

  /** The registry's import commit: the staged record becomes the live one. */
  async commitImport(): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.transfer.commit();
  }

  // ---- WebDAV locks (cap-dav-locks.ts) -------------------------------------

  async davLock(rawPath: string | null, request: LockRequest): Promise<Result<DavLock>> {
    if (this.#blocked) return this.#blocked;
    return this.davLocks.lock(rawPath, request, Date.now());
  }

  async davRefreshLock(rawPath: string | null, token: string, seconds: number): Promise<Result<DavLock>> {
    if (this.#blocked) return this.#blocked;
    return this.davLocks.refresh(rawPath, token, seconds, Date.now());
  }

  async davUnlock(rawPath: string | null, token: string): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.davLocks.unlock(rawPath, token, Date.now());
  }

  async davActiveLocks(): Promise<Result<DavLock[]>> {
    if (this.#blocked) return this.#blocked;
    return this.davLocks.active(Date.now());
  }

  async davDropLocks(rawPath: string | null): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.davLocks.drop(rawPath, Date.now());
  }

  // ---- WebDAV dead properties (cap-dav-props.ts, issue 26) -----------------

  async davPatchProps(rawPath: string | null, ops: PropOp[]): Promise<Result<PatchOutcome>> {
    if (this.#blocked) return this.#blocked;
    return this.davProps.patch(rawPath, ops);
  }

  async davGetProps(rawPaths: string[]): Promise<Result<DeadProp[][]>> {
    if (this.#blocked) return this.#blocked;
    return this.davProps.get(rawPaths);
  }

  async davDropProps(rawPath: string | null): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.davProps.drop(rawPath);
  }

  async davCarryProps(
    rawFrom: string | null,
    rawTo: string | null,
    move: boolean,
    subtree: boolean,
  ): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    return this.davProps.carry(rawFrom, rawTo, move, subtree);
  }

  // ---- format-0 re-issue (legacy-reissue.ts): the registry's calls, never a route's ----

  /** A format-0 cap's record and audit, for its re-issue; `record: null` for any other (or a dead) cap. */
  async legacyRecord(): Promise<Result<LegacyRecord>> {
    if (this.#blocked) return this.#blocked;
    return ok(await legacyObject.record(this.ctx.storage, this.log, await this.gate.live()));
  }

  /** One page of a format-0 cap's children, after the child id `after`. */
  async legacyChildren(after: string | null): Promise<Result<LegacyChildren>> {
    if (this.#blocked) return this.#blocked;
    return ok(await legacyObject.children(this.ctx.storage, after));
  }

  /** Becomes the re-issue of a format-0 cap (its record and audit), once; see legacy-reissue.ts. */
  async adoptReissued(record: CapRecord, audit: AuditRow[]): Promise<Result<AdoptOutcome>> {
    if (this.#blocked) return this.#blocked;
    return legacyObject.adopt(this.ctx.storage, this.log, await this.revocation.tombstoned(), record, audit);
  }

  async adoptReissuedChild(child: ChildRecord): Promise<null> {
    if (this.#blocked) return null;
    return legacyObject.adoptChild(this.ctx.storage, child);
  }

  /** Wipes this object if it is a format-0 cap (or empty): its re-issue holds everything it had. */
  async retireLegacy(): Promise<null> {
    if (this.#blocked) return null;
    return legacyObject.retire(this.ctx.storage);
  }

  /** holder binding (issue 20): admits a request the worker checked the DPoP proof of (holder-binding.ts). */
  async admitHolder(admission: HolderAdmission, now: number): Promise<Result<null>> {
    if (this.#blocked) return this.#blocked;
    await this.holderProofs.ready();
    return this.holderProofs.admit(await this.gate.live(), admission, now);
  }

  /**
   * The admission and the request's first call in one round trip
   * (worker/holder-ticket.ts): `method` runs only once the proof is admitted.
   */
  async withHolder(
    admission: HolderAdmission,
    now: number,
    method: string,
    args: unknown[],
  ): Promise<{ admitted: Result<null>; value: unknown }> {
    if (this.#blocked) return { admitted: this.#blocked, value: null };
    const admitted = await this.admitHolder(admission, now);
    if (!admitted.ok) return { admitted, value: null };
    const call = NOT_A_REQUEST_CALL.has(method) ? null : (this as unknown as Record<string, unknown>)[method];
    if (typeof call !== "function") return { admitted: refuse("noSuchRoute"), value: null };
    return { admitted, value: await call.apply(this, args) };
  }
}
