/**
 * Atomic, contained writes. The new content goes to a temp file created with
 * O_CREAT|O_EXCL|O_NOFOLLOW in the folder the host holds, is fsynced, and is
 * renamed over the target within that same held folder. A reader sees the
 * old file or the new one, never a prefix; a crash leaves at most a temp
 * file, which no cap can name and the next start removes. rename() replaces
 * a link at the target rather than following it, so even a link swapped in
 * at the last moment cannot send the bytes outside.
 */
import { createHash } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { type Validators, type WritePreconditions, writeAllowed } from "../shared/http-conditions.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { StoredWrite } from "../storage-adapters/storage-adapter.ts";
import {
  paceDeadline,
  readWithin,
  TOO_SLOW,
  type UploadLimits,
  uploadDeadline,
} from "../storage-adapters/upload-limits.ts";
import {
  closeEnd,
  type DirChain,
  entryKey,
  inDir,
  OPEN_NOFOLLOW,
  openRoot,
  pruneEmptyDirs,
  userSteps,
  type WalkEnd,
  walk,
} from "./beneath.ts";
import { removeEmptyFolder } from "./empty-folders.ts";
import { errnoOf, failFromFs } from "./fs-errors.ts";
import type { HostContext } from "./host-context.ts";
import { type ContentHashes, createExclusive, newTempName } from "./meta-store.ts";
import { type FileHandle, open, rename, unlink } from "./sync-fs.ts";
import { dropVersion, linkVersion } from "./version-store.ts";

export interface WriteRequest {
  length: number;
  contentType: string;
  preconditions: WritePreconditions;
  /** Also keep the bytes as this version blob (version-store.ts). */
  keepAs?: string | null;
}

/** A temp file placed beside its target, in the folder `chain.top`. */
interface PlacedTemp {
  chain: DirChain;
  name: string;
  temp: string;
  handle: FileHandle;
  /** Set once the temp has been renamed over the target: from then on it is the file. */
  committed: boolean;
  release(): Promise<void>;
}

/**
 * Writes `body` (exactly `request.length` bytes) to the path beneath the
 * root, creating missing folders (mode `ctx.dirMode`).
 *
 * @example
 * const outcome = await writeFile(ctx, [["notes"]], ["today.md"], body, {
 *   length: 5, contentType: "text/markdown", preconditions: { ifNoneMatch: "*" },
 * });
 */
export async function writeFile(
  ctx: HostContext,
  levels: string[][],
  segments: string[],
  body: ReadableStream<Uint8Array>,
  request: WriteRequest,
): Promise<Result<StoredWrite>> {
  const reader = body.getReader();
  const bound = bodyBound(request.length, ctx.uploads);
  const placed =
    segments.length === 0 ? refuse("needsFileName") : await placeTemp(ctx, levels, segments, request.preconditions);
  if (!placed.ok) {
    await drain(reader, bound);
    return placed;
  }
  const target = placed.value;
  let described: BigIntStats | null = null;
  try {
    const received = await receive(reader, target.handle, request.length, bound);
    if (!received.ok) return received;
    const stat = await target.handle.stat({ bigint: true });
    // Content and sidecar must both be durable before the rename, but neither
    // needs the other first: their fsyncs (the content's, the sidecar's and its
    // folder's) run at once. The sidecar is named by the temp's inode, which no
    // reader can open before the rename.
    described = stat;
    const durable = await Promise.allSettled([
      target.handle.sync(),
      ctx.meta.record(stat, received.value, request.contentType),
    ]);
    for (const outcome of durable) if (outcome.status === "rejected") throw outcome.reason;
    const key = await entryKey(target.chain.top, target.name);
    return await ctx.locks.run([key], () => commit(ctx, target, received.value, request));
  } catch (error) {
    return failFromFs(error, "writing");
  } finally {
    await drain(reader, bound);
    await target.handle.close().catch(() => undefined);
    if (!target.committed) {
      if (described) await ctx.meta.forget(described);
      await unlink(inDir(target.chain.top, target.temp)).catch(() => undefined);
      await pruneEmptyDirs(target.chain);
    }
    ctx.inFlight.delete(target.temp);
    await target.chain.close();
    await target.release();
  }
}

/**
 * Resolves the target (following links within the root) and creates the temp
 * file beside it. Refusals that need no body (conflicts, a failed
 * precondition) are decided here, before a byte is read; the precondition is
 * decided again, atomically, at commit.
 */
async function placeTemp(
  ctx: HostContext,
  levels: string[][],
  segments: string[],
  pre: WritePreconditions,
): Promise<Result<PlacedTemp>> {
  // A folder can be pruned by a concurrent delete between our mkdir and the
  // temp's creation; that shows as ENOENT and is simply tried again.
  for (let attempt = 0; attempt < 4; attempt++) {
    const root = await openRoot(ctx.base, levels, ctx.dirMode);
    if (!root.ok) return root;
    if (root.value.kind !== "root") return refuse("parentIsFile");
    const { release } = root.value;
    let found: WalkEnd | null = null;
    let placed = false;
    // A retry must not prune: a concurrent write may be about to use the folders (and prune ours back).
    let retrying = true;
    try {
      const end = await walk(root.value.chain, userSteps(segments), {
        followFinal: true,
        mkdirs: { mode: ctx.dirMode, final: false },
      });
      if (!end.ok) {
        if (end.error.code === "not_found") continue;
        return end;
      }
      found = end.value;
      retrying = false;
      if (found.kind === "absent" || found.kind === "blocked") return refuse("parentIsFile");
      if (found.kind === "dir") {
        // A folder holding no file does not exist for a cap; it must not block the file (see empty-folders.ts).
        retrying = await removeEmptyFolder(root.value.chain, segments);
        if (retrying) continue;
        return refuse("isDirectory");
      }
      if (found.kind !== "file" && found.kind !== "missing") return refuse("fileDirectoryClash");
      const current = found.kind === "file" ? await currentValidators(ctx, found.file, found.stat, pre) : null;
      if (!writeAllowed(pre, current)) return refuse("preconditionFailed");
      const temp = newTempName();
      let handle: FileHandle;
      ctx.inFlight.add(temp);
      try {
        handle = await createExclusive(found.chain.top, temp, ctx.fileMode);
      } catch (error) {
        ctx.inFlight.delete(temp);
        retrying = errnoOf(error) === "ENOENT";
        if (retrying) continue;
        throw error;
      }
      placed = true;
      if (found.kind === "file") await found.file.close();
      return ok({ chain: found.chain, name: found.name, temp, handle, committed: false, release });
    } catch (error) {
      return failFromFs(error, "writing");
    } finally {
      if (!placed) {
        // Folders this attempt made for a write that is refused must not stay behind.
        if (found && !retrying && "chain" in found) await pruneEmptyDirs(found.chain);
        if (found) await closeEnd(found);
        await release();
      }
    }
  }
  return refuse("unavailable");
}

/** How long a body may take: no gap over `idleMs`, done by `deadline` (ms since the epoch), keeping `pace` on the way. */
export interface BodyBound {
  idleMs: number;
  deadline: number;
  /** When more than this many bytes must have arrived (see paceDeadline). */
  pace(received: number): number;
}

/** The bound of a body of `length` bytes starting now, under `limits`. */
export function bodyBound(length: number, limits: UploadLimits): BodyBound {
  const start = Date.now();
  return {
    idleMs: limits.idleMs,
    deadline: uploadDeadline(length, limits, start),
    pace: (received) => paceDeadline(start, received, limits),
  };
}

/**
 * Reads and drops what is left of a body. A refusal is answered only after
 * the whole request arrived: cancelling it instead makes Miniflare's loopback
 * drop the connection, and the worker would see "unavailable" rather than
 * the refusal. But never for longer than `bound` allows: then it is
 * cancelled, so a stalled sender cannot hold the call open.
 */
export async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, bound: BodyBound): Promise<void> {
  try {
    for (;;) {
      const next = await readWithin(reader, bound.idleMs, bound.deadline);
      if (next === "timeout") return await reader.cancel(TOO_SLOW);
      if (next.done) return;
    }
  } catch {
    // The sender gave up; nothing left to wait for.
  }
}

/** Streams exactly `length` bytes into the temp file, hashing as it goes; too slow a body fails it. */
async function receive(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  handle: FileHandle,
  length: number,
  bound: BodyBound,
): Promise<Result<ContentHashes>> {
  const md5 = createHash("md5");
  const sha256 = createHash("sha256");
  let received = 0;
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      const next = await readWithin(reader, bound.idleMs, Math.min(bound.deadline, bound.pace(received)));
      if (next === "timeout") {
        await reader.cancel(TOO_SLOW).catch(() => undefined);
        return refuse("tooSlow");
      }
      chunk = next;
    } catch {
      return refuse("lengthMismatch");
    }
    if (chunk.done) break;
    received += chunk.value.byteLength;
    if (received > length) return refuse("lengthMismatch");
    md5.update(chunk.value);
    sha256.update(chunk.value);
    for (let offset = 0; offset < chunk.value.byteLength; ) {
      const { bytesWritten } = await handle.write(chunk.value, offset, chunk.value.byteLength - offset);
      offset += bytesWritten;
    }
  }
  return received === length ? ok({ etag: md5.digest("hex"), sha256: sha256.digest("hex") }) : refuse("lengthMismatch");
}

/** Under the target's lock: judge the precondition against what is there now, then rename. */
async function commit(
  ctx: HostContext,
  target: PlacedTemp,
  hashes: ContentHashes,
  request: WriteRequest,
): Promise<Result<StoredWrite>> {
  const dir = target.chain.top;
  let current: { file: FileHandle; stat: BigIntStats } | null = null;
  try {
    try {
      const file = await open(inDir(dir, target.name), OPEN_NOFOLLOW);
      current = { file, stat: await file.stat({ bigint: true }) };
    } catch (error) {
      // ENOENT: nothing there. ELOOP: a link appeared since we resolved the
      // target; rename will replace the link itself, never what it points at.
      if (errnoOf(error) !== "ENOENT" && errnoOf(error) !== "ELOOP") throw error;
    }
    if (current?.stat.isDirectory()) return refuse("isDirectory");
    if (current && !current.stat.isFile()) return refuse("fileDirectoryClash");
    const now = current ? await currentValidators(ctx, current.file, current.stat, request.preconditions) : null;
    if (!writeAllowed(request.preconditions, now)) return refuse("preconditionFailed");
    // A replaced file keeps its permissions; a new one gets the configured mode exactly.
    await target.handle.chmod(current ? Number(current.stat.mode & 0o777n) : ctx.fileMode);
    // The sidecar was recorded before the lock (see writeFile). The version
    // link is made before the rename, so a version exists for every file
    // placed; a failed rename takes it back, so a failed write keeps none.
    // A link that cannot be made (the root's folder on another filesystem)
    // keeps no version but never fails the write.
    const keepAs = request.keepAs ?? null;
    const kept =
      keepAs !== null &&
      (await linkVersion(ctx.versions, dir, target.temp, keepAs).then(
        () => true,
        () => false,
      ));
    try {
      await rename(inDir(dir, target.temp), inDir(dir, target.name));
    } catch (error) {
      if (kept) await dropVersion(ctx, keepAs);
      throw error;
    }
    target.committed = true;
    await dir.sync();
    if (current && (await current.file.stat({ bigint: true })).nlink === 0n) await ctx.meta.forget(current.stat);
    return ok({ created: current === null, size: request.length, ...hashes, kept });
  } finally {
    await current?.file.close();
  }
}

/** What a precondition is judged against; without one, a file placed by hand is not hashed for nothing. */
async function currentValidators(
  ctx: HostContext,
  file: FileHandle,
  stat: BigIntStats,
  pre: WritePreconditions,
): Promise<Validators> {
  return pre.ifMatch === undefined && pre.ifNoneMatch === undefined
    ? { etag: "", sha256: null }
    : ctx.meta.validatorsOf(file, stat);
}
