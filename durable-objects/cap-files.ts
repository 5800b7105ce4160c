import { contentTypeOf } from "../shared/content-type.ts";
import { malformedSha256Tag } from "../shared/http-conditions.ts";
import { refuse } from "../shared/refusals.ts";
import { type CapFailure, ok, type Result, refuseBody } from "../shared/result.ts";
import type { ListPage, Stat, WriteResult } from "../shared/wire-types.ts";
import type { CheckedRoot } from "../storage-adapters/checked-path.ts";
import type { ReadOutcome, StorageAdapter, StorageReadOptions } from "../storage-adapters/storage-adapter.ts";
import { DEFAULT_CONTENT_TYPE } from "../storage-adapters/storage-adapter.ts";
import { newBlobName } from "../storage-adapters/version-blobs.ts";
import type { CapAudit } from "./cap-audit.ts";
import { type CapAuthorize, noSuchCap } from "./cap-authorize.ts";
import { grantPath, type StorageGrant } from "./cap-grant.ts";
import type { CapHost } from "./cap-host.ts";
import { holdForWrite, releaseHold } from "./cap-quota.ts";
import { type CapRevocation, cutOnAbort } from "./cap-revocation.ts";
import { journalPath, recordVersion } from "./cap-versions.ts";
import { entriesFor, etagConditionWithoutRead, statFor } from "./content-hints.ts";
import { largeChunks } from "./large-chunks.ts";
import { decodeCursor, decodeTreeCursor, encodeCursor, parseDepth, parseLimit } from "./list-cursor.ts";

const DEFAULT_MAX_FILE_BYTES = 100 * 1024 * 1024;

/** A file write as the worker read it from the request's headers. */
export interface WriteFileHeaders {
  /** The request's Content-Length; bodies of unknown length are refused before they get here. */
  length: number;
  contentType: string | null;
  ifMatch?: string | undefined;
  ifNoneMatch?: string | undefined;
}

/** What the worker needs to perform one read the cap object decided: see {@link CapFiles.grantRead}. */
export type ReadGrant = StorageGrant;

/**
 * A cap's file operations through its storage adapter, each admitted by the
 * chokepoint, audited, and (when it mutates) recorded in the root's journal.
 */
export class CapFiles {
  constructor(
    private readonly host: CapHost,
    private readonly gate: CapAuthorize,
    private readonly audit: CapAudit,
    private readonly revocation: CapRevocation,
  ) {}

  async readFile(rawPath: string | null, options: StorageReadOptions): Promise<Result<ReadOutcome>> {
    return this.audit.run("read", rawPath, async () => {
      const access = await this.gate.authorize({ rights: ["read"] }, { kind: "file", raw: [rawPath] });
      if (!access.ok) return access;
      const {
        paths: [at],
        storage,
      } = access.value;
      // A download already streaming when the cap is revoked is left to finish: it reveals
      // nothing the holder could not read a moment before, and a guard on every read is costly.
      return storage.read(at, options);
    });
  }

  /**
   * Decides a read (alive, the read right, the path) and hands the worker
   * what it needs to perform it for this one request, so the bytes go from
   * storage to the client without crossing this object. The grant never
   * leaves the worker: the root stays out of every answer. Revocation
   * guarantees what it did for reads performed here: a read asked after
   * revocation answered is refused; one already granted may still run, as a
   * download already streaming may finish (see readFile).
   */
  async grantRead(rawPath: string | null): Promise<Result<ReadGrant>> {
    return grantPath(this.gate, this.audit, "read", ["read"], "file", rawPath);
  }

  /** The worker's granted read was refused by storage: audit it as a refusal of {@link readFile} would be. */
  async auditReadRefusal(rawPath: string | null, refusal: CapFailure): Promise<null> {
    await this.audit.run("read", rawPath, async () => ({ ok: false, error: refusal }));
    return null;
  }

  async writeFile(
    rawPath: string | null,
    body: ReadableStream<Uint8Array>,
    request: WriteFileHeaders,
  ): Promise<Result<WriteResult>> {
    return this.audit.run("write", rawPath, () => this.write(rawPath, body, request));
  }

  private async write(
    rawPath: string | null,
    body: ReadableStream<Uint8Array>,
    request: WriteFileHeaders,
  ): Promise<Result<WriteResult>> {
    const limit = this.maxFileBytes();
    const access = await this.gate.authorize(
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
    const hold = await holdForWrite(this.host.env, cap, at, request.length);
    if (!hold.ok) return refuseBody(body, hold, request.length);
    // Asking the journal let this object's other calls in: a revocation that answered meanwhile
    // stopped every upload it saw running, and this one was not yet; it must not land now.
    if (hold.value !== null && !(await this.gate.live())) {
      await releaseHold(this.host.env, cap, hold.value);
      return refuseBody(body, noSuchCap(), request.length);
    }
    const keepAs = newBlobName();
    const written = await this.revocation.revocable(cap.expiresAt, async (signal) =>
      storage.write(at, cutOnAbort(largeChunks(body, request.length), signal, cap.expiresAt), {
        length: request.length,
        contentType,
        ifMatch: request.ifMatch,
        ifNoneMatch: request.ifNoneMatch,
        signal,
        keepAs,
      }),
    );
    if (!written.ok) await releaseHold(this.host.env, cap, hold.value);
    // A write cut short by revocation stored nothing; say so as the cap would now.
    if (!written.ok && !(await this.gate.live())) return noSuchCap();
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
    await recordVersion(this.host.env, cap, change);
    return ok(result);
  }

  async deleteFile(rawPath: string | null): Promise<Result<null>> {
    return this.audit.run("delete", rawPath, async () => {
      const access = await this.gate.authorize({ rights: ["delete"] }, { kind: "file", raw: [rawPath] });
      if (!access.ok) return access;
      const {
        cap,
        paths: [at],
        storage,
      } = access.value;
      // Nothing to cut, but revocation waits for it, so it cannot land after.
      const removed = await this.revocation.revocable(cap.expiresAt, () => storage.remove(at));
      if (removed.ok) await recordVersion(this.host.env, cap, { op: "delete", path: journalPath(at) });
      return removed;
    });
  }

  async statPath(rawPath: string | null): Promise<Result<Stat>> {
    return this.audit.run("stat", rawPath, async () => {
      const access = await this.gate.authorize(
        { rights: ["read", "list"], any: true },
        { kind: "entry", raw: [rawPath] },
      );
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
   * Makes a folder (and any missing above it): the write right, a valid
   * path, no file in its place or above it, and (on disk) no link leading
   * out. It stays, empty, until removeFolder. MCP's `create_directory`.
   * Folders are not versioned and count toward no quota.
   */
  makeFolder(rawPath: string | null): Promise<Result<null>> {
    return this.folderCall("mkdir", "write", rawPath, (storage, folder) => storage.makeDir(folder));
  }

  /** Removes an empty folder (the delete right); the folder holding it stays. */
  removeFolder(rawPath: string | null): Promise<Result<null>> {
    return this.folderCall("rmdir", "delete", rawPath, (storage, folder) => storage.removeDir(folder));
  }

  /** A folder's own call: audited, one right, the path checked as a folder, cut by revocation and expiry. */
  private folderCall(
    op: "mkdir" | "rmdir",
    right: "write" | "delete",
    rawPath: string | null,
    act: (storage: StorageAdapter, folder: CheckedRoot) => Promise<Result<null>>,
  ): Promise<Result<null>> {
    return this.audit.run(op, rawPath, async () => {
      const access = await this.gate.authorize({ rights: [right] }, { kind: "childRoot", raw: [rawPath] });
      if (!access.ok) return access;
      const {
        cap,
        paths: [folder],
        storage,
      } = access.value;
      return this.revocation.revocable(cap.expiresAt, () => act(storage, folder));
    });
  }

  async listDir(
    rawPath: string | null,
    rawCursor: string | null,
    rawLimit: string | null,
    rawDepth: string | null,
  ): Promise<Result<ListPage>> {
    return this.audit.run("list", rawPath, async () => {
      const access = await this.gate.authorize(
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
    });
  }

  async movePath(rawFrom: string | null, rawTo: string | null, overwrite: boolean): Promise<Result<null>> {
    return this.audit.run("move", `${rawFrom ?? ""} -> ${rawTo ?? ""}`, async () => {
      const access = await this.gate.authorize(
        { rights: ["write", "delete"] },
        { kind: "file", raw: [rawFrom, rawTo] },
      );
      if (!access.ok) return access;
      const {
        cap,
        paths: [from, to],
        storage,
      } = access.value;
      const moved = await this.revocation.revocable(cap.expiresAt, () => storage.move(from, to, overwrite));
      if (moved.ok && from.key !== to.key)
        await recordVersion(this.host.env, cap, { op: "move", path: journalPath(from), to: journalPath(to) });
      return moved;
    });
  }

  private maxFileBytes(): number {
    const configured = Number(this.host.env.CAPVAULT_MAX_FILE_BYTES);
    return Number.isSafeInteger(configured) && configured > 0 ? configured : DEFAULT_MAX_FILE_BYTES;
  }
}
