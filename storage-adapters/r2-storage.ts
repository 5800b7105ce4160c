import { etagListMatches, parseByteRange, type Validators, writeAllowed } from "../shared/http-conditions.ts";
import { nativeChunks } from "../shared/native-chunks.ts";
import { refuse } from "../shared/refusals.ts";
import { isListableName } from "../shared/rel-path.ts";
import { ok, type Result, refuseBody } from "../shared/result.ts";
import { compareUtf8 } from "../shared/utf8-order.ts";
import type { ListEntry, Stat } from "../shared/wire-types.ts";
import { yieldTurn } from "../shared/yield-turn.ts";
import type { CheckedDir, CheckedEntry, CheckedFile, CheckedRoot } from "./checked-path.ts";
import {
  DEFAULT_CONTENT_TYPE,
  type FileMeta,
  type ReadOutcome,
  type StorageAdapter,
  type StorageListOptions,
  type StorageListPage,
  type StorageReadOptions,
  type StorageWriteOptions,
  type StoredWrite,
  type VersionBytes,
} from "./storage-adapter.ts";
import { isListablePath, TREE_WALK_BUDGET, TreePage } from "./tree-page.ts";
import { timedBody, UPLOAD_LIMITS, type UploadLimits, UploadSlots } from "./upload-limits.ts";
import { INLINE_VERSION_MAX, isBlobName, R2_VERSIONS_PREFIX } from "./version-blobs.ts";
import { readWhole, WHOLE_BODY_MAX } from "./whole-body.ts";

/** Uploads in progress in this isolate. */
const r2Uploads = new UploadSlots();

/** Bytes a copy inside storage moves between two turns of the runtime (see takingTurns). */
const TURN_BYTES = 64 * 1024;

/** R2 deletes and lists move at most this many keys per call. */
const R2_PAGE = 1000;

/**
 * R2 calls per operation (each is a subrequest on Cloudflare, where a request
 * may make 50 on the Free plan and 1,000 on paid plans). With A the calls of
 * the ancestor check, at most {@link ANCESTOR_CALLS_MAX}:
 *   read 6 (3 tries of head + get; a read without Range or If-None-Match 2), stat 2, remove 2,
 *   write A + 6 (list, head, then up to 256 KiB: put, the version's put and, if the put was refused, its
 *   delete; over it: the version's put, get + put of it to the key with its hash and, if that was refused,
 *   the version's delete, see stage and place), move A + 5 (get, list, head, put, delete),
 *   prepareRoot A, list with depth 2 + 5 (see listTree), list 28: 2 to judge the folder, a page or two of 1,000
 *   keys, and 24 (see foldersListedLater); one more page per 1,000 keys no
 *   cap can name (written around the vault) that fill the folder.
 * README's "R2 calls per request" repeats these.
 */
const DIRECT_ANCESTOR_HEADS = 8;
/** Lists one recursive page may make: the walk budget in pages of 1,000, and one spare for short pages. */
const TREE_LIST_CALLS = Math.ceil(TREE_WALK_BUDGET / R2_PAGE) + 1;
/** Folders looked up when a listing page is cut (see foldersListedLater). */
const LATER_FOLDER_CHECKS = 24;
/** A binary search over at most 512 ancestors (10 lists) and one head. */
export const ANCESTOR_CALLS_MAX = 11;

function metaOf(object: R2Object): FileMeta {
  return {
    size: object.size,
    etag: object.etag,
    sha256: sha256Of(object),
    modified: object.uploaded.toISOString(),
    contentType: object.httpMetadata?.contentType ?? DEFAULT_CONTENT_TYPE,
  };
}

/** Where an object's SHA-256 is kept: custom metadata, which R2 lists, heads and copies with the object. */
const SHA256_KEY = "sha256";
/** Listings carry each file's hash. */
const WITH_HASH: ("customMetadata" | "httpMetadata")[] = ["customMetadata"];
/** The list options workerd honours; the pinned types predate `include`. */
type ListOptions = R2ListOptions & { include?: typeof WITH_HASH };
/** The SHA-256 of no bytes. */
const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/** The stored hash, trusted only in its own shape (keys written around the vault may carry anything). */
function sha256Of(object: R2Object): string | null {
  const value = object.customMetadata?.[SHA256_KEY];
  return value !== undefined && /^[0-9a-f]{64}$/.test(value) ? value : null;
}

function fileEntry(name: string, object: R2Object): ListEntry {
  return {
    name,
    type: "file",
    size: object.size,
    etag: object.etag,
    sha256: sha256Of(object),
    modified: object.uploaded.toISOString(),
  };
}

function validatorsOf(object: R2Object | null): Validators | null {
  return object ? { etag: object.etag, sha256: sha256Of(object) } : null;
}

function hex(buffer: ArrayBuffer): string {
  return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * R2 has no directories, only keys. This adapter gives it the directory
 * semantics the disk backend has for free (a file cannot sit where a folder
 * is, folders vanish with their last file) so that both answer alike.
 *
 * Races between two writers of `a` and `a/b` can still leave both; R2 offers
 * no multi-key transaction to prevent it.
 */
export class R2Storage implements StorageAdapter {
  constructor(
    private readonly bucket: R2Bucket,
    private readonly uploads: UploadLimits = UPLOAD_LIMITS,
  ) {}

  async read(at: CheckedFile, options: StorageReadOptions): Promise<Result<ReadOutcome>> {
    const key = at.key;
    // A plain read needs nothing judged before the bytes: one get gives the
    // body and the meta of the same version.
    if (!options.range && !options.ifNoneMatch) {
      const object = await this.bucket.get(key);
      if (object) return ok({ status: "body", meta: metaOf(object), body: object.body, range: null });
      return (await this.isDir(key + "/")) ? refuse("isDirectory") : refuse("notFound");
    }
    // Head first to judge the range against the current size, then fetch only
    // if the object is still that version; retry if it changed in between.
    for (let attempt = 0; attempt < 3; attempt++) {
      const head = await this.bucket.head(key);
      if (!head) return (await this.isDir(key + "/")) ? refuse("isDirectory") : refuse("notFound");
      const meta = metaOf(head);
      if (options.ifNoneMatch && etagListMatches(options.ifNoneMatch, meta.etag))
        return ok({ status: "not_modified", meta });
      const range = parseByteRange(options.range, meta.size);
      if (range === "unsatisfiable") return ok({ status: "unsatisfiable", meta });
      const object = await this.bucket.get(key, {
        onlyIf: { etagMatches: meta.etag },
        ...(range ? { range: { offset: range.start, length: range.end - range.start + 1 } } : {}),
      });
      if (!object) return refuse("notFound");
      if (!("body" in object)) continue;
      return ok({ status: "body", meta, body: object.body, range });
    }
    return refuse("keptChanging");
  }

  async write(
    at: CheckedFile,
    body: ReadableStream<Uint8Array>,
    options: StorageWriteOptions,
  ): Promise<Result<StoredWrite>> {
    const key = at.key;
    const [ancestorIsFile, isDir, current] = await Promise.all([
      this.anyAncestorIsFile(key),
      this.isDir(key + "/"),
      this.bucket.head(key),
    ]);
    if (ancestorIsFile) return refuseBody(body, refuse("parentIsFile"), options.length);
    if (isDir) return refuseBody(body, refuse("isDirectory"), options.length);
    if (!writeAllowed(options, validatorsOf(current)))
      return refuseBody(body, refuse("preconditionFailed"), options.length);
    // Counted per isolate (every cap object an isolate runs shares it).
    const release = r2Uploads.take(this.uploads.maxConcurrent);
    if (!release) return refuseBody(body, refuse("tooManyUploads"), options.length);
    try {
      const timed = timedBody(body, options.length, this.uploads);
      const stored = await this.store(key, timed.body, options, current);
      return !stored.ok && timed.timedOut() ? refuse("tooSlow") : stored;
    } finally {
      release();
    }
  }

  /** Streams the body into a put, exactly `options.length` bytes, judged against `current`. */
  private async store(
    key: string,
    body: ReadableStream<Uint8Array>,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    // R2 needs a body of known length; FixedLengthStream also refuses a body
    // that delivers more or fewer bytes than declared, so R2 never stores a
    // truncated file.
    // An empty file is stored from an empty buffer: R2 does not read a
    // zero-length stream, and a pipe into it would wait for a reader forever.
    if (options.length === 0) return this.writeEmpty(key, body, options, current);
    if (options.length <= WHOLE_BODY_MAX) return this.writeWhole(key, body, options, current);
    const fixed = new FixedLengthStream(options.length);
    let delivered = 0;
    // Hashed on the way to R2, so the bytes are read once.
    const digest = new crypto.DigestStream("SHA-256");
    const hashing = digest.getWriter();
    const counted = body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        async transform(chunk, controller) {
          delivered += chunk.byteLength;
          await hashing.write(chunk);
          controller.enqueue(chunk);
        },
        flush: () => hashing.close(),
      }),
    );
    const piping = counted.pipeTo(fixed.writable).catch(() => undefined);
    if (isBlobName(options.keepAs)) {
      const staged = await this.stage(options.keepAs, fixed.readable, options.contentType, () => delivered, options);
      if (!staged.ok) return staged;
      await piping;
      const sha256 = hex(await digest.digest);
      return this.place(key, options.keepAs, sha256, options, current);
    }
    // The precondition was decided above by the rule every backend shares
    // (writeAllowed). R2 re-checks it atomically, but it must not re-judge the
    // raw headers: it compares If-Match strongly (`W/"x"` never matches), so
    // it would refuse writes the disk accepts. It re-checks only that the key
    // is still the version that was judged: the same decision, still atomic.
    const conditional = options.ifMatch !== undefined || options.ifNoneMatch !== undefined;
    const onlyIf = new Headers(current ? { "if-match": `"${current.etag}"` } : { "if-none-match": "*" });
    let stored: R2Object | null;
    try {
      stored = await this.bucket.put(key, fixed.readable, {
        httpMetadata: { contentType: options.contentType },
        ...(conditional ? { onlyIf } : {}),
      });
    } catch {
      // Never wait for the pipe here: R2 may have refused without reading the
      // body, and then the pipe would wait for a reader forever.
      // Nothing was stored either way. Blame the client only when its body
      // was the wrong length; otherwise it was storage, and worth a retry.
      return delivered === options.length ? refuse("storageFailed") : refuse("lengthMismatch");
    }
    // R2 re-checks the precondition atomically; null means it failed there
    // (and it may not have read the body: do not wait for the pipe).
    if (!stored) return refuse("preconditionFailed");
    await piping;
    const sha256 = hex(await digest.digest);
    await this.seal(key, stored, sha256, options.signal);
    return ok({ created: current === null, size: stored.size, etag: stored.etag, sha256, kept: false });
  }

  /**
   * A streamed write that keeps a version goes to its version blob first, and
   * from there to its key with its hash ({@link place}): two writes of the
   * bytes, as the file alone costs (a put, then a copy onto itself for the
   * hash, see seal), where putting the file, sealing it and copying it to
   * its blob cost three, each holding the runtime's one thread.
   */
  private async stage(
    blob: string,
    body: ReadableStream<Uint8Array>,
    contentType: string,
    delivered: () => number,
    options: StorageWriteOptions,
  ): Promise<Result<null>> {
    try {
      await this.bucket.put(R2_VERSIONS_PREFIX + blob, body, { httpMetadata: { contentType } });
      return ok(null);
    } catch {
      // Never wait for the pipe here (see store); nothing was stored.
      return delivered() === options.length ? refuse("storageFailed") : refuse("lengthMismatch");
    }
  }

  /**
   * Copies a staged blob to its key, with its hash, under the write's
   * precondition (as store puts it). Until this put lands the file is what
   * it was: a failure, a precondition lost to another writer, or a
   * revocation (`signal` cuts the copy, and a put of a cut body stores
   * nothing) leaves it so and drops the blob. A crash in between leaves the
   * file as it was, no version recorded (the journal hears of a write only
   * once it answers) and the blob's bytes unreachable: no row names them.
   */
  private async place(
    key: string,
    blob: string,
    sha256: string,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    const staged = R2_VERSIONS_PREFIX + blob;
    const conditional = options.ifMatch !== undefined || options.ifNoneMatch !== undefined;
    const onlyIf = new Headers(current ? { "if-match": `"${current.etag}"` } : { "if-none-match": "*" });
    let stored: R2Object | null | undefined;
    try {
      const object = options.signal?.aborted ? null : await this.bucket.get(staged);
      if (object && !options.signal?.aborted) {
        const fixed = new FixedLengthStream(object.size);
        const signal = options.signal;
        const piping = takingTurns(object.body)
          .pipeTo(fixed.writable, signal ? { signal } : {})
          .catch(() => undefined);
        stored = await this.bucket.put(key, fixed.readable, {
          httpMetadata: { contentType: options.contentType },
          customMetadata: { [SHA256_KEY]: sha256 },
          ...(conditional ? { onlyIf } : {}),
        });
        // null: the precondition failed there, maybe before the body was read (do not wait for the pipe).
        if (stored) await piping;
      } else await object?.body.cancel();
    } catch {
      stored = undefined;
    }
    if (!stored) {
      await this.bucket.delete(staged).catch(() => undefined);
      return stored === null ? refuse("preconditionFailed") : refuse("storageFailed");
    }
    return ok({ created: current === null, size: stored.size, etag: stored.etag, sha256, kept: true });
  }

  /**
   * Records the hash of a streamed write. R2 takes custom metadata only with
   * the put, before the hash of a streamed body is known, so the object is
   * copied onto itself with it, if it is still the version just stored (a
   * later write keeps its own hash). Until then, and if this fails, the file
   * reports `sha256: null`, as a file stored before hashes were kept does.
   * The copy is as large as the file, and a revocation waits for the write:
   * once `signal` aborts the copy is cut (a put of a failed body stores
   * nothing) or never started, so the revocation is answered at once.
   */
  private async seal(key: string, stored: R2Object, sha256: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    try {
      const object = await this.bucket.get(key, { onlyIf: { etagMatches: stored.etag } });
      if (!object || !("body" in object)) return;
      if (object.version !== stored.version || signal?.aborted) return void (await object.body.cancel());
      const fixed = new FixedLengthStream(object.size);
      const piping = object.body.pipeTo(fixed.writable, signal ? { signal } : {}).catch(() => undefined);
      await this.bucket.put(key, fixed.readable, {
        httpMetadata: object.httpMetadata ?? {},
        customMetadata: { ...object.customMetadata, [SHA256_KEY]: sha256 },
        onlyIf: { etagMatches: stored.etag, uploadedBefore: new Date(stored.uploaded.getTime() + 1) },
      });
      await piping;
    } catch {
      // The file is stored whole; only its hash is missing.
    }
  }

  /** A small body, read whole and hashed first, so the put records its hash: one R2 write. */
  private async writeWhole(
    key: string,
    body: ReadableStream<Uint8Array>,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    const bytes = await readWhole(body, options.length);
    if (!bytes) return refuse("lengthMismatch");
    const sha256 = hex(await crypto.subtle.digest("SHA-256", bytes));
    return this.putWhole(key, bytes, sha256, options, current);
  }

  /**
   * One buffer, two puts at once: the file, and its version blob when one is
   * asked. A file that is not stored keeps no blob either. A version of at
   * most {@link INLINE_VERSION_MAX} bytes is no put: its bytes go back to the
   * cap object for the journal's row (`inline`).
   */
  private async putWhole(
    key: string,
    bytes: Uint8Array,
    sha256: string,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    const conditional = options.ifMatch !== undefined || options.ifNoneMatch !== undefined;
    const onlyIf = new Headers(current ? { "if-match": `"${current.etag}"` } : { "if-none-match": "*" });
    const metadata = { httpMetadata: { contentType: options.contentType }, customMetadata: { [SHA256_KEY]: sha256 } };
    const inline = isBlobName(options.keepAs) && bytes.byteLength <= INLINE_VERSION_MAX;
    const blob = isBlobName(options.keepAs) && !inline ? R2_VERSIONS_PREFIX + options.keepAs : null;
    const [stored, kept] = await Promise.all([
      this.bucket.put(key, bytes, { ...metadata, ...(conditional ? { onlyIf } : {}) }).catch(() => undefined),
      blob === null
        ? inline
        : this.bucket.put(blob, bytes, metadata).then(
            () => true,
            () => false,
          ),
    ]);
    if (!stored) {
      if (kept && blob !== null) await this.bucket.delete(blob).catch(() => undefined);
      return stored === undefined ? refuse("storageFailed") : refuse("preconditionFailed");
    }
    const written = { created: current === null, size: stored.size, etag: stored.etag, sha256, kept };
    return ok(inline ? { ...written, inline: bytes } : written);
  }

  async readVersion(blob: string): Promise<Result<VersionBytes>> {
    if (!isBlobName(blob)) return refuse("versionRedacted");
    const object = await this.bucket.get(R2_VERSIONS_PREFIX + blob);
    return object ? ok({ size: object.size, body: object.body }) : refuse("versionRedacted");
  }

  async dropVersion(blob: string): Promise<Result<null>> {
    if (!isBlobName(blob)) return ok(null);
    try {
      await this.bucket.delete(R2_VERSIONS_PREFIX + blob);
      return ok(null);
    } catch {
      return refuse("unavailable");
    }
  }

  private async writeEmpty(
    key: string,
    body: ReadableStream<Uint8Array>,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    const reader = body.getReader();
    // A body that fails (or times out) before it ends stores nothing, even an empty file.
    const first = await reader.read().catch(() => null);
    await reader.cancel().catch(() => undefined);
    if (!first || (!first.done && first.value && first.value.byteLength > 0)) return refuse("lengthMismatch");
    return this.putWhole(key, new Uint8Array(0), EMPTY_SHA256, options, current);
  }

  async remove(at: CheckedFile): Promise<Result<null>> {
    const key = at.key;
    const head = await this.bucket.head(key);
    if (!head) return (await this.isDir(key + "/")) ? refuse("isDirectory") : refuse("notFound");
    await this.bucket.delete(key);
    return ok(null);
  }

  async stat(at: CheckedEntry): Promise<Result<Stat>> {
    if (at.path.segments.length === 0) return ok({ type: "dir" });
    const key = at.key;
    const [head, isDir] = await Promise.all([this.bucket.head(key), this.isDir(key + "/")]);
    if (head) return ok({ type: "file", ...metaOf(head) });
    if (isDir) return ok({ type: "dir" });
    return refuse("notFound");
  }

  async list(at: CheckedDir, options: StorageListOptions): Promise<Result<StorageListPage>> {
    const { path, key: dir } = at;
    if (path.segments.length > 0 && options.after === null) {
      const [head, isDir] = await Promise.all([this.bucket.head(dir.slice(0, -1)), this.isDir(dir)]);
      if (head) return refuse("isFile");
      if (!isDir) return refuse("notFound");
    }
    if (options.depth !== undefined && options.depth !== 1) return ok(await this.listTree(at, options));
    const collected: ListEntry[] = [];
    const seen = new Set<string>();
    const atCapRoot = path.segments.length === 0;
    let cursor: string | undefined;
    // Resume after the last name by key order. A directory `d` reappears as
    // the delimited prefix `d/` (its keys sort after `d`); the name filter
    // below drops it, so every directory is listed exactly once.
    const startAfter = options.after === null ? undefined : dir + options.after;
    let later: LaterFolders | undefined;
    for (;;) {
      const listing: ListOptions = {
        prefix: dir,
        delimiter: "/",
        limit: R2_PAGE,
        include: WITH_HASH,
        ...(cursor ? { cursor } : startAfter ? { startAfter } : {}),
      };
      const page = await this.bucket.list(listing);
      for (const object of page.objects) {
        const name = object.key.slice(dir.length);
        if (accept(name, options.after, seen, atCapRoot)) collected.push(fileEntry(name, object));
      }
      for (const prefix of page.delimitedPrefixes) {
        const name = prefix.slice(dir.length, -1);
        if (accept(name, options.after, seen, atCapRoot)) collected.push({ name, type: "dir" });
      }
      if (!page.truncated) break;
      if (collected.length > options.limit) {
        // The last key of this page, in R2's (UTF-8) order.
        const lastKey = [page.objects.at(-1)?.key ?? "", page.delimitedPrefixes.at(-1) ?? ""].sort(compareUtf8)[1]!;
        later = await this.foldersListedLater(
          dir,
          lastKey,
          (name) =>
            isListableName(name, atCapRoot) &&
            !seen.has(name) &&
            (options.after === null || compareUtf8(name, options.after) > 0),
        );
        for (const name of later.folders)
          if (accept(name, options.after, seen, atCapRoot)) collected.push({ name, type: "dir" });
        break;
      }
      cursor = page.cursor;
    }
    collected.sort((a, b) => compareUtf8(a.name, b.name));
    // Past the first unchecked candidate, an unseen folder may still sort in: the page ends before it.
    const cut = later?.unchecked;
    const known = cut === undefined ? collected : collected.filter((entry) => compareUtf8(entry.name, cut) < 0);
    const entries = known.slice(0, options.limit);
    if (known.length <= options.limit && cut === undefined) return ok({ entries, next: null });
    // An empty page still moves on: every name up to the last candidate checked is known.
    return ok({ entries, next: entries.at(-1)?.name ?? later!.lastChecked! });
  }

  /**
   * A recursive page: without a delimiter R2 lists every key below the folder
   * in UTF-8 order, which is the order the page needs. At most
   * {@link TREE_LIST_CALLS} lists, however the walk budget falls.
   */
  private async listTree(at: CheckedDir, options: StorageListOptions): Promise<StorageListPage> {
    const dir = at.key;
    const atCapRoot = at.path.segments.length === 0;
    const page = new TreePage(options.depth ?? 0, options.limit, options.after);
    let cursor: string | undefined;
    const startAfter = options.after === null ? undefined : dir + options.after;
    for (let call = 0; call < TREE_LIST_CALLS; call++) {
      const listing: ListOptions = {
        prefix: dir,
        limit: R2_PAGE,
        include: WITH_HASH,
        ...(cursor ? { cursor } : startAfter ? { startAfter } : {}),
      };
      const listed = await this.bucket.list(listing);
      for (const object of listed.objects) {
        const name = object.key.slice(dir.length);
        const step = isListablePath(name, atCapRoot) ? page.next(name) : page.skip(name);
        if (step === "stop") return page.finish(false);
        if (step === "file") page.addFile(fileEntry(name, object));
      }
      if (!listed.truncated) return page.finish(true);
      cursor = listed.cursor;
    }
    return page.finish(false);
  }

  async move(from: CheckedFile, to: CheckedFile, overwrite: boolean): Promise<Result<null>> {
    const [src, dst] = [from.key, to.key];
    const source = await this.bucket.get(src);
    if (!source) return (await this.isDir(src + "/")) ? refuse("cannotMoveDirectory") : refuse("notFound");
    const [ancestorIsFile, isDir, existing] = await Promise.all([
      this.anyAncestorIsFile(dst),
      this.isDir(dst + "/"),
      this.bucket.head(dst),
    ]);
    const refusal = ancestorIsFile
      ? "destinationParentIsFile"
      : isDir
        ? "destinationIsDirectory"
        : existing && !overwrite
          ? "destinationExists"
          : null;
    if (refusal) {
      await source.body.cancel();
      return refuse(refusal);
    }
    if (src === dst) {
      await source.body.cancel();
      return ok(null);
    }
    // R2 has no rename: copy, then delete the source only once the copy is
    // stored, so a failed copy never loses the source.
    const fixed = new FixedLengthStream(source.size);
    const piping = source.size === 0 ? source.body.cancel() : source.body.pipeTo(fixed.writable).catch(() => undefined);
    let copied: R2Object | null;
    try {
      copied = await this.bucket.put(dst, source.size === 0 ? new Uint8Array(0) : fixed.readable, {
        httpMetadata: source.httpMetadata ?? {},
        // The hash travels with the bytes.
        customMetadata: source.customMetadata ?? {},
        ...(overwrite ? {} : { onlyIf: new Headers({ "if-none-match": "*" }) }),
      });
    } catch {
      return refuse("copyFailed");
    }
    // null: a file appeared at the destination after it was checked. Nothing
    // was copied, so the source must stay.
    if (!copied) return refuse("destinationExists");
    await piping;
    await this.bucket.delete(src);
    return ok(null);
  }

  async prepareRoot(root: CheckedRoot): Promise<Result<null>> {
    const prefix = root.key;
    if (prefix === "") return ok(null);
    // The prefix ends in `/`, so this covers the folder itself too.
    if (await this.anyAncestorIsFile(prefix)) return refuse("isFile");
    return ok(null);
  }

  /**
   * Folders that R2 lists after `lastKey` but that sort by name before names
   * already collected. The folder `d` is the key prefix `d/`, which comes after
   * `d!x`, `d.x` and every other `d` + a byte below `/`; so when a page is cut
   * after such keys, `d` may still be unseen though its name sorts first, and
   * resuming after a later name would skip it for good. Only a prefix of the
   * last key seen that is followed there by a byte below `/` can be such a
   * folder (any other unseen name sorts after the last key), so those are
   * looked up: at most {@link LATER_FOLDER_CHECKS} of them, shortest (first
   * by name) first. A name like `x-------…` has hundreds; `unchecked` is then
   * the first one left, and the page must end before it.
   */
  private async foldersListedLater(
    dirKey: string,
    lastKey: string,
    wanted: (name: string) => boolean,
  ): Promise<LaterFolders> {
    const rest = lastKey.slice(dirKey.length).replace(/\/$/, "");
    const candidates: string[] = [];
    for (let i = 1; i < rest.length; i++)
      if (rest.charCodeAt(i) < 0x2f && wanted(rest.slice(0, i))) candidates.push(rest.slice(0, i));
    const checked = candidates.slice(0, LATER_FOLDER_CHECKS);
    const found = await Promise.all(
      checked.map(async (name) => ((await this.isDir(`${dirKey}${name}/`)) ? name : null)),
    );
    return {
      folders: found.filter((name) => name !== null),
      unchecked: candidates[LATER_FOLDER_CHECKS],
      lastChecked: checked.at(-1),
    };
  }

  private async isDir(dirKey: string): Promise<boolean> {
    const page = await this.bucket.list({ prefix: dirKey, limit: 1 });
    return page.objects.length > 0;
  }

  /**
   * Whether a file sits where a folder above `key` is needed, from the top of
   * the bucket: the cap's own root levels included, as the disk finds them on
   * its way down. (Checking only the path below the root let R2 write `x/f`
   * for a child cap whose root `x` had since become a file; disk refused.)
   *
   * At most {@link ANCESTOR_CALLS_MAX} R2 calls, however deep the key: a key
   * of 1,024 bytes can have 512 ancestors, and a head for each would pass
   * Cloudflare's per-request subrequest limit (50 on the Free plan).
   * Shallow keys head every ancestor at once. Deeper ones rest on what the
   * adapter keeps true (a file never sits where a folder holds keys): the
   * folders holding keys form an unbroken run from the top (a key under
   * `a/b/` is under `a/` too), so a binary search with one-key lists finds
   * the deepest, and only the ancestor just below it can be a file.
   */
  private async anyAncestorIsFile(key: string): Promise<boolean> {
    const ancestors: string[] = [];
    for (let i = key.indexOf("/"); i >= 0; i = key.indexOf("/", i + 1)) ancestors.push(key.slice(0, i));
    if (ancestors.length <= DIRECT_ANCESTOR_HEADS) {
      const heads = await Promise.all(ancestors.map((ancestor) => this.bucket.head(ancestor)));
      return heads.some((head) => head !== null);
    }
    // Invariant: ancestors[0 .. holding) hold keys; ancestors[below ..] do not.
    let holding = 0;
    let below = ancestors.length;
    while (holding < below) {
      const mid = (holding + below) >> 1;
      if (await this.isDir(`${ancestors[mid]}/`)) holding = mid + 1;
      else below = mid;
    }
    return holding < ancestors.length && (await this.bucket.head(ancestors[holding]!)) !== null;
  }
}

/**
 * `source` in chunks of 64 KiB, each read after a turn of the runtime
 * (shared/yield-turn.ts): a copy inside storage reads as fast as the bucket
 * answers, and on the local runtime the bucket shares the one thread with
 * every other request, so an unpaced copy of a large file holds that thread
 * for its whole length. The runtime fills each buffer natively
 * (`readAtLeast`), so JavaScript sees a chunk per turn, not the bucket's
 * small ones. A stream that cannot be read so is returned as it is.
 */
function takingTurns(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  return nativeChunks(source, { min: TURN_BYTES, max: TURN_BYTES }, yieldTurn);
}

interface LaterFolders {
  folders: string[];
  /** The first candidate not looked up, if any: names from it on are not known to be complete. */
  unchecked: string | undefined;
  lastChecked: string | undefined;
}

/** Keeps only names a cap could address (keys written around the vault may not be), each once. */
function accept(name: string, after: string | null, seen: Set<string>, atCapRoot: boolean): boolean {
  if (seen.has(name)) return false;
  if (after !== null && compareUtf8(name, after) <= 0) return false;
  if (!isListableName(name, atCapRoot)) return false;
  seen.add(name);
  return true;
}
