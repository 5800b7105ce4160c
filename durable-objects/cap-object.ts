import { DurableObject } from "cloudflare:workers";
import { contentTypeOf } from "../shared/content-type.ts";
import type { GrantRequest } from "../shared/grant-request.ts";
import { malformedSha256Tag } from "../shared/http-conditions.ts";
import { childChain, effectiveLimits, NO_LIMITS } from "../shared/quota.ts";
import { refuse } from "../shared/refusals.ts";
import type { RelPath } from "../shared/rel-path.ts";
import { type CapFailure, ok, type Result, refuseBody } from "../shared/result.ts";
import { isSubset, type Right } from "../shared/rights.ts";
import { digestToken, mintToken } from "../shared/token.ts";
import type {
  AuditEntry,
  Backend,
  CapInfo,
  CapTree,
  ChildPage,
  ListPage,
  MintedCap,
  Stat,
  VersionPage,
  WriteResult,
} from "../shared/wire-types.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import type { ReadOutcome, Root, StorageAdapter, StorageReadOptions } from "../storage-adapters/storage-adapter.ts";
import { DEFAULT_CONTENT_TYPE } from "../storage-adapters/storage-adapter.ts";
import { newBlobName } from "../storage-adapters/version-blobs.ts";
import { AUDIT_TABLES, AuditLog, KEEP_DONE, KEEP_REFUSED } from "./audit-log.ts";
import type { CapEnv } from "./cap-env.ts";
import { holdForWrite, quotaInfo, releaseHold } from "./cap-quota.ts";
import {
  type CapRecord,
  type CapRef,
  type ChildRecord,
  delegationDepth,
  isoOrNull,
  MAX_DELEGATION_DEPTH,
  type Tombstone,
} from "./cap-record.ts";
import { liveChildren, TREE_MAX_NODES, type TreeChild, walkTree } from "./cap-tree.ts";
import {
  childHistoryFrom,
  journalPath,
  recordVersion,
  redactVersion,
  type VersionBody,
  versionBytes,
  versionPage,
  versionPageRequest,
  watchThrough,
} from "./cap-versions.ts";
import { closeWatchSockets, grantWatchSocket, type WatchSocketGrant } from "./cap-watch-socket.ts";
import { addChild, CHILD, CHILD_COUNT, chunks, removeChild } from "./child-index.ts";
import { childPage } from "./child-page.ts";
import { entriesFor, etagConditionWithoutRead, statFor } from "./content-hints.ts";
import { childBinding, type HolderAdmission, HolderProofs, holderField } from "./holder-binding.ts";
import { largeChunks } from "./large-chunks.ts";
import { holdsOnly } from "./leaf-state.ts";
import { decodeCursor, decodeTreeCursor, encodeCursor, parseDepth, parseLimit } from "./list-cursor.ts";
import { capObjectStub, rootRegistryStub } from "./object-stubs.ts";
import { type CheckedOf, checkKey, type PathKind, parsePath } from "./path-check.ts";
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

/** A file write as the worker read it from the request's headers. */
export interface WriteFileHeaders {
  /** The request's Content-Length; bodies of unknown length are refused before they get here. */
  length: number;
  contentType: string | null;
  ifMatch?: string | undefined;
  ifNoneMatch?: string | undefined;
}

/** What the worker needs to perform one read the cap object decided: see {@link CapObject.grantRead}. */
export interface ReadGrant {
  backend: Backend;
  /** The file this object checked: its root levels and path. */
  root: Root;
  path: RelPath;
}

export interface RevokeOutcome {
  /** Descendants not yet reached; their revocation is finished by alarms. */
  pending: number;
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
  /** holder binding (issue 20): the jtis of this cap's DPoP proofs (holder-binding.ts). */
  private readonly holderProofs = new HolderProofs(this.ctx.storage.sql);
  /**
   * Transfers and mutations running through this cap. Authority is checked
   * when an operation starts, so revocation must also stop the ones already
   * running: it aborts their streams and waits for them, and only then
   * answers, so nothing lands through a cap after its revocation returned.
   */
  private readonly running = new Set<{ abort: AbortController; settled: Promise<unknown> }>();
  /** Change feeds open through this cap, each by its closer: revocation closes them (cap-versions.ts). */
  private readonly watches = new Set<() => void>();

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
    if (await this.ctx.storage.get(RECORD)) return refuse("capExists");
    if (await this.ctx.storage.get(TOMBSTONE)) return refuse("capExists");
    await this.ctx.storage.put(RECORD, record);
    if (record.expiresAt !== null) await this.ctx.storage.setAlarm(record.expiresAt);
    return ok(null);
  }

  /** `withUsage`: also the usage of the cap's subtree, a call to its root's journal (`GET /object/<token>`). */
  async describe(withUsage = false): Promise<Result<CapInfo>> {
    const cap = await this.live();
    if (!cap) return noSuchCap();
    const quota = withUsage ? await quotaInfo(this.env, cap) : { limits: effectiveLimits(cap.quotas) };
    // Revoked while the journal answered: say so as a dead cap does.
    if (withUsage && !(await this.live())) return noSuchCap();
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
    // No record: a revocation left work (unreached children, state to clear); finish it.
    if (!cap) {
      // Every descendant reached and every upload settled: clear the rest.
      // Nothing but storage calls since the cascade's last look at the
      // children, so no racing mint can have recorded one in between.
      if ((await this.cascade()).pending === 0) {
        await this.ctx.storage.deleteAll();
        await this.ctx.storage.deleteAlarm();
      }
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

  async readFile(rawPath: string | null, options: StorageReadOptions): Promise<Result<ReadOutcome>> {
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
      const access = await this.authorize({ rights: ["read"] }, { kind: "file", raw: [rawPath] });
      if (!access.ok) return access;
      const {
        cap,
        paths: [at],
      } = access.value;
      // A checked path loses its brand crossing RPC; the worker rebuilds it
      // with the same check (durable-objects/path-check.ts), which is pure.
      return ok({ backend: cap.backend, root: at.root, path: at.path });
    });
  }

  /** The worker's granted read was refused by storage: audit it as a refusal of {@link readFile} would be. */
  async auditReadRefusal(rawPath: string | null, refusal: CapFailure): Promise<null> {
    if (AUDITED_REFUSALS.has(refusal.code))
      await this.recordIfLive("read", rawPath, { ok: false, error: refusal }, false, null);
    return null;
  }

  private async readUnaudited(rawPath: string | null, options: StorageReadOptions): Promise<Result<ReadOutcome>> {
    const access = await this.authorize({ rights: ["read"] }, { kind: "file", raw: [rawPath] });
    if (!access.ok) return access;
    const {
      paths: [at],
      storage,
    } = access.value;
    // A download already streaming when the cap is revoked is left to finish:
    // it reveals nothing the holder could not read a moment before, and
    // passing every read through a guard stream cost 3x in throughput.
    return storage.read(at, options);
  }

  async writeFile(
    rawPath: string | null,
    body: ReadableStream<Uint8Array>,
    request: WriteFileHeaders,
  ): Promise<Result<WriteResult>> {
    return this.audited("write", rawPath, true, () => this.writeUnaudited(rawPath, body, request));
  }

  private async writeUnaudited(
    rawPath: string | null,
    body: ReadableStream<Uint8Array>,
    request: WriteFileHeaders,
  ): Promise<Result<WriteResult>> {
    const limit = this.maxFileBytes();
    const access = await this.authorize(
      { rights: ["write"] },
      {
        kind: "file",
        raw: [rawPath],
        judge: (cap) =>
          etagConditionWithoutRead(cap.rights, request)
            ? refuse("etagNeedsRead")
            : malformedSha256Tag(request.ifMatch) || malformedSha256Tag(request.ifNoneMatch)
              ? refuse("malformedSha256")
              : request.length > limit
                ? refuse("tooLarge", { limit })
                : contentTypeOf(request.contentType, DEFAULT_CONTENT_TYPE),
      },
    );
    if (!access.ok) return refuseBody(body, access, request.length);
    const {
      cap,
      paths: [at],
      storage,
      judged: contentType,
    } = access.value;
    // Room in every quota of the chain is held before storage is touched: a refused write stores nothing.
    const hold = await holdForWrite(this.env, cap, at, request.length);
    if (!hold.ok) return refuseBody(body, hold, request.length);
    // Asking the journal let this object's other calls in: a revocation that answered meanwhile
    // stopped every upload it saw running, and this one was not yet; it must not land now.
    if (hold.value !== null && !(await this.live())) {
      await releaseHold(this.env, cap, hold.value);
      return refuseBody(body, noSuchCap(), request.length);
    }
    const keepAs = newBlobName();
    const written = await this.revocable(cap.expiresAt, async (signal) =>
      storage.write(at, cutOnAbort(largeChunks(body), signal, cap.expiresAt), {
        length: request.length,
        contentType,
        ifMatch: request.ifMatch,
        ifNoneMatch: request.ifNoneMatch,
        signal,
        keepAs,
      }),
    );
    if (!written.ok) await releaseHold(this.env, cap, hold.value);
    // A write cut short by revocation stored nothing; say so as the cap would now.
    if (!written.ok && !(await this.live())) return noSuchCap();
    if (!written.ok) return written;
    const { kept, inline, ...result } = written.value;
    const blob = kept ? keepAs : null;
    const change = {
      op: "write",
      path: journalPath(at),
      ...result,
      contentType,
      blob,
      bytes: inline,
      hold: hold.value,
    } as const;
    await recordVersion(this.env, cap, change);
    return ok(result);
  }

  async deleteFile(rawPath: string | null): Promise<Result<null>> {
    return this.audited("delete", rawPath, true, async () => {
      const access = await this.authorize({ rights: ["delete"] }, { kind: "file", raw: [rawPath] });
      if (!access.ok) return access;
      const {
        cap,
        paths: [at],
        storage,
      } = access.value;
      // Nothing to cut, but revocation waits for it, so it cannot land after.
      const removed = await this.revocable(cap.expiresAt, () => storage.remove(at));
      if (removed.ok) await recordVersion(this.env, cap, { op: "delete", path: journalPath(at) });
      return removed;
    });
  }

  async statPath(rawPath: string | null): Promise<Result<Stat>> {
    return this.audited("stat", rawPath, false, async () => {
      const access = await this.authorize({ rights: ["read", "list"], any: true }, { kind: "entry", raw: [rawPath] });
      if (!access.ok) return access;
      const {
        cap,
        paths: [at],
        storage,
      } = access.value;
      const stat = await storage.stat(at);
      return stat.ok ? ok(statFor(cap.rights, stat.value)) : stat;
    });
  }

  /**
   * Whether files could be written under this folder: the write right, a
   * valid path, no file in its place or above it, and (on disk) no link
   * leading out. Folders exist only while they hold a file, so this makes
   * nothing; it is MCP's `create_directory`, decided here like every write.
   */
  async checkFolder(rawPath: string | null): Promise<Result<null>> {
    return this.audited("mkdir", rawPath, false, async () => {
      const access = await this.authorize({ rights: ["write"] }, { kind: "childRoot", raw: [rawPath] });
      if (!access.ok) return access;
      const {
        paths: [folder],
        storage,
      } = access.value;
      return storage.prepareRoot(folder, { create: false });
    });
  }

  async listDir(
    rawPath: string | null,
    rawCursor: string | null,
    rawLimit: string | null,
    rawDepth: string | null = null,
  ): Promise<Result<ListPage>> {
    return this.audited("list", rawPath, false, () => this.listUnaudited(rawPath, rawCursor, rawLimit, rawDepth));
  }

  private async listUnaudited(
    rawPath: string | null,
    rawCursor: string | null,
    rawLimit: string | null,
    rawDepth: string | null,
  ): Promise<Result<ListPage>> {
    const access = await this.authorize(
      { rights: ["list"] },
      {
        kind: "dir",
        raw: [rawPath],
        judge: () => {
          const limit = parseLimit(rawLimit);
          if (!limit.ok) return limit;
          const depth = parseDepth(rawDepth);
          if (!depth.ok) return depth;
          const after = depth.value === 1 ? decodeCursor(rawCursor) : decodeTreeCursor(rawCursor);
          return after.ok ? ok({ after: after.value, limit: limit.value, depth: depth.value }) : after;
        },
      },
    );
    if (!access.ok) return access;
    const {
      cap,
      paths: [at],
      storage,
      judged: wanted,
    } = access.value;
    const page = await storage.list(at, wanted);
    if (!page.ok) return page;
    return ok({
      entries: entriesFor(cap.rights, page.value.entries),
      cursor: page.value.next === null ? null : encodeCursor(page.value.next),
    });
  }

  async movePath(rawFrom: string | null, rawTo: string | null, overwrite: boolean): Promise<Result<null>> {
    return this.audited("move", `${rawFrom ?? ""} -> ${rawTo ?? ""}`, true, async () => {
      const access = await this.authorize({ rights: ["write", "delete"] }, { kind: "file", raw: [rawFrom, rawTo] });
      if (!access.ok) return access;
      const {
        cap,
        paths: [from, to],
        storage,
      } = access.value;
      const moved = await this.revocable(cap.expiresAt, () => storage.move(from, to, overwrite));
      if (moved.ok && from.key !== to.key)
        await recordVersion(this.env, cap, { op: "move", path: journalPath(from), to: journalPath(to) });
      return moved;
    });
  }

  // ---- versions (durable-objects/cap-versions.ts, root-journal.ts) --------

  async listVersions(rawPath: string | null, rawCursor: string | null, rawLimit: string | null) {
    return this.audited("versions", rawPath, false, async (): Promise<Result<VersionPage>> => {
      const access = await this.authorize(
        { rights: ["read"] },
        { kind: "file", raw: [rawPath], judge: () => versionPageRequest(rawCursor, rawLimit) },
      );
      if (!access.ok) return access;
      const { cap, paths, judged } = access.value;
      return versionPage(this.env, cap, paths[0], judged);
    });
  }

  async readVersion(rawId: string): Promise<Result<VersionBody>> {
    return this.audited("read_version", rawId, false, async () => {
      const access = await this.authorize({ rights: ["read"] });
      return access.ok ? versionBytes(this.env, access.value.cap, rawId) : access;
    });
  }

  /**
   * Writes a version's bytes back to its path through the normal write path: rights, audit, a new version.
   * Also answers that path (relative to this cap), so a tool can say what it restored.
   */
  async restoreVersion(rawId: string): Promise<Result<WriteResult & { path: string }>> {
    // Read as well: the answer's hashes and path describe the old bytes, which a write-only cap may not learn.
    const access = await this.authorize({ rights: ["read", "write"] });
    if (!access.ok) return access;
    const found = await versionBytes(this.env, access.value.cap, rawId);
    if (!found.ok) return found;
    const { path, size, contentType: kept, body } = found.value;
    // A type stored before types were checked is restored as the default rather than refused.
    const contentType = contentTypeOf(kept, DEFAULT_CONTENT_TYPE).ok ? kept : null;
    const written = await this.writeFile(path, body, { length: size, contentType });
    return written.ok ? ok({ ...written.value, path }) : written;
  }

  /** The change feed of this cap's subtree, from the root's journal; closed when the cap is revoked or expires. */
  async watch(rawSince: string | null): Promise<Result<ReadableStream<Uint8Array>>> {
    const access = await this.authorize({ rights: ["read"] });
    if (!access.ok) return access;
    const opened = await watchThrough(this.env, access.value.cap, rawSince, this.watches);
    if (!opened.ok) return opened;
    // Revoked while the feed was being opened: the cascade may have missed it.
    if (!(await this.live())) {
      opened.value.close();
      return noSuchCap();
    }
    return ok(opened.value.stream);
  }

  /** A WebSocket watcher of this cap's subtree, for the worker to hand to the root's journal (cap-watch-socket.ts). */
  async watchSocket(rawSince: string | null): Promise<Result<WatchSocketGrant>> {
    const access = await this.authorize({ rights: ["read"] });
    if (!access.ok) return access;
    return grantWatchSocket(this.env, this.ctx.storage, access.value.cap, rawSince);
  }

  async redactVersion(rawId: string): Promise<Result<null>> {
    return this.audited("redact", rawId, true, async () => {
      const access = await this.authorize({ rights: ["delete"] });
      return access.ok ? redactVersion(this.env, access.value.cap, rawId) : access;
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
    const access = await this.authorize(
      { rights: ["subdir"] },
      {
        kind: "childRoot",
        raw: [request.path],
        judge: (cap) => {
          const rights = request.rights ?? cap.rights;
          return isSubset(rights, cap.rights) ? ok(rights) : refuse("rightsNotHeld");
        },
      },
    );
    if (!access.ok) return access;
    const {
      cap,
      paths: [root],
      storage,
      judged: rights,
    } = access.value;
    // holder binding (issue 20, holder-binding.ts): never looser than the parent's.
    const binding = await childBinding(cap, request);
    if (!binding.ok) return binding;
    const depth = delegationDepth(cap) + 1;
    if (depth > MAX_DELEGATION_DEPTH) return refuse("delegationTooDeep", { limit: MAX_DELEGATION_DEPTH });
    // The child's quota rule governs its own subtree, named as the journal names paths.
    const quotas = childChain(cap.quotas, root.root.slice(1).join(""), request.limits ?? NO_LIMITS);
    if (!quotas.ok) return quotas;
    const prepared = await storage.prepareRoot(root, { create: false });
    if (!prepared.ok) return prepared;
    const historyFrom = await childHistoryFrom(this.env, cap, request.history);
    if (!historyFrom.ok) return historyFrom;

    const now = Date.now();
    const requested = request.ttlSeconds === null ? null : now + request.ttlSeconds * 1000;
    const expiresAt = cap.expiresAt === null ? requested : Math.min(requested ?? Infinity, cap.expiresAt);
    const minted = await mintToken(this.env.CAPVAULT_TOKEN_KEY, binding.value !== null);
    if (!minted.ok) return minted;
    const token = minted.value;
    const { key, id } = await digestToken(token);
    const child: ChildRecord = {
      id,
      key,
      label: request.label,
      path: root.path.text,
      rights,
      createdAt: now,
      expiresAt,
    };

    // Record the child before it exists, so a revocation that interleaves
    // with this mint (the input gate opens at every await) already sees it.
    const added = await addChild(this.ctx.storage, child);
    if (!added.ok) return added;
    const stub = this.capStub(key);
    const made = await stub.init({
      id,
      key,
      backend: cap.backend,
      root: root.root,
      rights,
      label: request.label,
      createdAt: now,
      expiresAt,
      parent: { id: cap.id, key: cap.key },
      depth,
      // Retention is the root's: a child inherits it, never sets its own.
      ...(cap.retention ? { retention: cap.retention } : {}),
      // Quotas are inherited like retention; a child's own rule only tightens them.
      ...(quotas.value.length > 0 ? { quotas: quotas.value } : {}),
      // The child's history starts at its mint unless asked otherwise, never before its parent's.
      ...(historyFrom.value !== undefined ? { historyFrom: historyFrom.value } : {}),
      ...holderField(binding.value),
    });
    if (!made.ok) {
      // No child was made: the record added above names nothing. (Refused
      // because this cap's revocation reached the child first: say so as a dead cap does.)
      await removeChild(this.ctx.storage, id);
      return (await this.live()) ? made : noSuchCap();
    }
    if (!(await this.live())) {
      // Revoked while the child was being made: the cascade may have run
      // before the child's init landed, so revoke it again ourselves, and
      // leave it to the alarm if even that fails.
      const undone = await stub.revokeSubtree().catch(() => null);
      // Undone: forget it, or a leaf revoked without an alarm (its cascade
      // found no children) would keep this record for good.
      if (undone?.ok) await removeChild(this.ctx.storage, id);
      else {
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
    const admitted = await this.authorize({ rights: ["subdir"], refusal: "listChildrenNeedsSubdir" });
    if (!admitted.ok) return admitted;
    return childPage(this.ctx.storage, rawCursor, rawLimit);
  }

  /** The delegation tree below this cap, ids only, within fixed bounds (durable-objects/cap-tree.ts). */
  async tree(): Promise<Result<CapTree>> {
    const admitted = await this.authorize({ rights: ["subdir"], refusal: "treeNeedsSubdir" });
    if (!admitted.ok) return admitted;
    return ok((await this.walk(admitted.value.cap.id)).tree);
  }

  /**
   * Revokes a cap anywhere below this one (as far as `tree` reaches), with its
   * subtree: the holder of an ancestor could revoke it with that ancestor anyway.
   */
  async revokeDescendant(id: string): Promise<Result<RevokeOutcome>> {
    const admitted = await this.authorize({ rights: ["subdir"], refusal: "revokeChildNeedsSubdir" });
    if (!admitted.ok) return admitted;
    const found = (await this.walk(admitted.value.cap.id)).index.get(id);
    if (!found) return refuse("noSuchChild");
    if (found.parent === null) return this.revokeChild(id);
    const outcome = await this.capStub(found.key)
      .revokeSubtree()
      .catch(() => refuse("unavailable"));
    if (!outcome.ok) return outcome;
    await this.capStub(found.parent)
      .forgetChild(id)
      .catch(() => null);
    await this.recordIfLive("revoke_child", found.path, outcome, true, id);
    return outcome;
  }

  private async walk(id: string) {
    const own = await liveChildren(this.ctx.storage, TREE_MAX_NODES + 1);
    return walkTree(id, own.ok ? own.value : [], (key, limit) => this.capStub(key).treeChildren(limit));
  }

  /** For an ancestor's tree walk only (objects call it, no route does): a dead cap has no children. */
  async treeChildren(limit: number): Promise<Result<TreeChild[]>> {
    if (!(await this.live())) return ok([]);
    return liveChildren(this.ctx.storage, limit);
  }

  async revokeChild(id: string): Promise<Result<RevokeOutcome>> {
    const admitted = await this.authorize({ rights: ["subdir"], refusal: "revokeChildNeedsSubdir" });
    if (!admitted.ok) return admitted;
    const child = typeof id === "string" ? await this.ctx.storage.get<ChildRecord>(CHILD + id) : undefined;
    if (!child || (child.expiresAt !== null && child.expiresAt <= Date.now())) return refuse("noSuchChild");
    const outcome = await this.capStub(child.key)
      .revokeSubtree()
      .catch(() => refuse("unavailable"));
    if (!outcome.ok) return outcome;
    await removeChild(this.ctx.storage, id);
    await this.recordIfLive("revoke_child", child.path, outcome, true, child.id);
    return outcome;
  }

  /** The newest audit lines of this cap, newest first. Needs no right: it is the holder's own history. */
  async auditTrail(rawLimit: string | null): Promise<Result<{ entries: AuditEntry[] }>> {
    const admitted = await this.authorize({ rights: [] });
    if (!admitted.ok) return admitted;
    // Every kept line fits in one answer.
    const limit = parseLimit(rawLimit, KEEP_DONE + KEEP_REFUSED);
    if (!limit.ok) return limit;
    return ok({ entries: this.audit.recent(limit.value) });
  }

  /** holder binding (issue 20): admits a request the worker checked the DPoP proof of (holder-binding.ts). */
  async admitHolder(admission: HolderAdmission, now: number): Promise<Result<null>> {
    return this.holderProofs.admit(await this.live(), admission, now);
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
    for (const close of [...this.watches]) close();
    for (const op of stopping) op.abort.abort();
    await Promise.all([...stopping.map((op) => op.settled), closeWatchSockets(this.env, this.ctx.storage)]);
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
   * storage without passing all three, and storage gets each path checked
   * (durable-objects/path-check.ts), so no adapter checks it again. What a
   * request asks beyond its path (`judge`: an etag condition, a child's
   * rights, a size, a page) is judged where it always was: once the paths
   * parse, before their keys. Without paths, it stops after the rights.
   */
  private async authorize(need: Need): Promise<Result<{ cap: CapRecord }>>;
  private async authorize<K extends PathKind, const R extends readonly (string | null)[], A = null>(
    need: Need,
    at: PathRequest<K, R, A>,
  ): Promise<Result<Access<K, R, A>>>;
  private async authorize(
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
    const storage = selectStorage(this.env, cap.backend);
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

  /**
   * Kills this cap and its subtree. The record goes first, in one commit with
   * a tombstone and an alarm (a leaf holding nothing else needs neither, see
   * below), so from that instant every request here answers
   * `no_such_cap`. Then it stops what is running here and revokes the
   * children in bounded batches, each of which does the same before it
   * answers. So when this answers with `pending: 0`, every descendant's
   * record is gone and every upload through any of them has settled: each is
   * dead on every route and nothing lands through it afterwards, even when a
   * record was already gone (expired, or a second revocation under way).
   * Children not reached keep their records; `pending` counts them, and the
   * alarm retries them.
   *
   * Clearing the rest of the state (the child index, the audit table, the
   * object's storage as a whole) is not on the answer's path: the alarm does
   * it. On the local runtime `deleteAll()` deletes and re-creates the
   * object's database file, several times the cost of the one commit that
   * kills the cap, and a tree of 1,111 caps paid it 1,111 times before its
   * revocation answered.
   */
  private async cascade(): Promise<RevokeOutcome> {
    const cap = await this.ctx.storage.get<CapRecord>(RECORD);
    const earlier = await this.ctx.storage.get<Tombstone>(TOMBSTONE);
    const children = (await this.ctx.storage.list({ prefix: CHILD, limit: 1 })).size > 0;
    if (!cap && !earlier && !children) {
      // Never minted, or revoked and cleared already: an upload still running
      // here (its record expired) must settle first. A mint's init may still
      // be on its way (see init): the tombstone refuses it; the alarm clears it.
      await this.ctx.storage.put(TOMBSTONE, { pending: [], parent: null } satisfies Tombstone);
      await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
      await this.stopRunning();
      return { pending: 0 };
    }
    // A cap that never minted (or whose children are all forgotten) and
    // holds nothing else: its kill leaves its storage empty, so it needs no
    // tombstone and no alarm. Most caps of a tree are such leaves, and on the
    // local runtime each alarm set is a commit of its own (to the scheduler's
    // database), about half of what revoking a leaf cost.
    const leaf = !earlier && !children && (await holdsOnly(this.ctx.storage, [RECORD, CHILD_COUNT], AUDIT_TABLES));
    // The kill: storage calls only, nothing else awaited between them, so
    // they land in one commit and a crash leaves the cap whole or dead.
    const tombstone: Tombstone = { pending: [], parent: cap?.parent ?? earlier?.parent ?? null };
    await this.ctx.storage.delete(leaf ? [RECORD, CHILD_COUNT] : [RECORD]);
    if (!leaf) await this.ctx.storage.put(TOMBSTONE, tombstone);
    // Older tombstones listed unreached children; they now stay as child records.
    const legacy = (earlier?.pending ?? []).map((ref): [string, CapRef] => [CHILD + ref.id, ref]);
    for (const batch of chunks(legacy, 128)) await this.ctx.storage.put(Object.fromEntries(batch));
    this.audit.clear();
    if (!leaf) await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);

    const [pending] = await Promise.all([
      revokeChildren(this.ctx.storage, (ref) => this.capStub(ref.key).revokeSubtree()),
      this.stopRunning(),
    ]);
    // A mint that raced this revocation and could not undo its child records
    // it here for the alarm: never clear a record nobody has reached. (A leaf
    // gets its alarm here too: the child record alone brings the alarm's
    // cascade back to it.)
    const left = (await this.ctx.storage.list({ prefix: CHILD, limit: 1 })).size;
    // The alarm retries what is left, then clears the state; its time is
    // pushed back while the fan-out still had children to reach.
    if (pending > 0 || left > 0) await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
    return { pending: Math.max(pending, left) };
  }

  private capStub(key: string): DurableObjectStub<CapObject> {
    return capObjectStub(this.env, key);
  }

  private registry() {
    return rootRegistryStub(this.env);
  }

  private maxFileBytes(): number {
    const configured = Number(this.env.CAPVAULT_MAX_FILE_BYTES);
    return Number.isSafeInteger(configured) && configured > 0 ? configured : DEFAULT_MAX_FILE_BYTES;
  }
}

/** A right check: all of `rights` (with `any`, one of them), else `refusal` (by default, naming the rights). */
interface Need {
  rights: readonly Right[];
  any?: boolean;
  refusal?: "listChildrenNeedsSubdir" | "revokeChildNeedsSubdir" | "treeNeedsSubdir";
}

/** The raw paths an operation names, how each must be checked, and what else it asks (see authorize). */
interface PathRequest<K extends PathKind, R extends readonly (string | null)[], A> {
  kind: K;
  raw: R;
  judge?: (cap: CapRecord) => Result<A>;
}

interface Access<K extends PathKind, R extends readonly (string | null)[], A> {
  cap: CapRecord;
  paths: { -readonly [I in keyof R]: CheckedOf<K> };
  storage: StorageAdapter;
  judged: A;
}

function noSuchCap<T>(): Result<T> {
  return refuse("noSuchCap");
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
