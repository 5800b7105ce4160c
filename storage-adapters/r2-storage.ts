import { etagListMatches, parseByteRange, writeAllowed } from "../shared/http-conditions.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result, refuseBody } from "../shared/result.ts";
import type { Stat } from "../shared/wire-types.ts";
import type { CheckedDir, CheckedEntry, CheckedFile, CheckedRoot } from "./checked-path.ts";
import { R2Folders } from "./r2-folders.ts";
import { R2Listing } from "./r2-listing.ts";
import { metaOf, validatorsOf } from "./r2-objects.ts";
import { R2Writes } from "./r2-writes.ts";
import type {
  ReadOutcome,
  StorageAdapter,
  StorageListOptions,
  StorageListPage,
  StorageReadOptions,
  StorageWriteOptions,
  StoredWrite,
  VersionBytes,
} from "./storage-adapter.ts";
import { timedBody, UPLOAD_LIMITS, type UploadLimits, UploadSlots } from "./upload-limits.ts";
import { isBlobName, R2_VERSIONS_PREFIX } from "./version-blobs.ts";

export { ANCESTOR_CALLS_MAX } from "./r2-folders.ts";

/** Uploads in progress in this isolate. */
const r2Uploads = new UploadSlots();

/*
 * R2 calls per operation (each is a subrequest on Cloudflare, where a request
 * may make 50 on the Free plan and 1,000 on paid plans). With A the calls of
 * the ancestor check, at most ANCESTOR_CALLS_MAX (r2-folders.ts):
 *   read 6 (3 tries of head + get; a read without Range or If-None-Match 2), stat 2, remove 3 (head, the
 *   folder's marker, delete), makeDir A + 1, removeDir 4 (head, list, the parent's marker, delete),
 *   write A + 6 (list, head, then up to 256 KiB: put, the version's put and, if the put was refused, its
 *   delete; over it: the version's put, get + put of it to the key with its hash and, if that was refused,
 *   the version's delete, see r2-writes.ts), move A + 6 (get, list, head, put, the source folder's marker, delete),
 *   prepareRoot A, list with depth 2 + 5 (see r2-listing.ts), list 28: 2 to judge the folder, a page or two of
 *   1,000 keys, and 24 (see foldersListedLater); one more page per 1,000 keys no
 *   cap can name (written around the vault) that fill the folder.
 * docs/storage.md repeats these.
 */

/**
 * R2 has no directories, only keys. This adapter gives it the directory
 * semantics the disk backend has for free (a file cannot sit where a folder
 * is, a folder stays until removed) so that both answer alike.
 *
 * Races between two writers of `a` and `a/b` can still leave both; R2 offers
 * no multi-key transaction to prevent it.
 */
export class R2Storage implements StorageAdapter {
  private readonly folders: R2Folders;
  private readonly writes: R2Writes;
  private readonly listing: R2Listing;

  constructor(
    private readonly bucket: R2Bucket,
    private readonly uploads: UploadLimits = UPLOAD_LIMITS,
  ) {
    this.folders = new R2Folders(bucket);
    this.writes = new R2Writes(bucket);
    this.listing = new R2Listing(bucket, this.folders);
  }

  async read(at: CheckedFile, options: StorageReadOptions): Promise<Result<ReadOutcome>> {
    const key = at.key;
    // A plain read needs nothing judged before the bytes: one get gives the
    // body and the meta of the same version.
    if (!options.range && !options.ifNoneMatch) {
      const object = await this.bucket.get(key);
      if (object) return ok({ status: "body", meta: metaOf(object), body: object.body, range: null });
      return (await this.folders.isDir(key + "/")) ? refuse("isDirectory") : refuse("notFound");
    }
    // Head first to judge the range against the current size, then fetch only
    // if the object is still that version; retry if it changed in between.
    for (let attempt = 0; attempt < 3; attempt++) {
      const head = await this.bucket.head(key);
      if (!head) return (await this.folders.isDir(key + "/")) ? refuse("isDirectory") : refuse("notFound");
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
      this.folders.anyAncestorIsFile(key),
      this.folders.isDir(key + "/"),
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
      const stored = await this.writes.store(key, timed.body, options, current);
      return !stored.ok && timed.timedOut() ? refuse("tooSlow") : stored;
    } finally {
      release();
    }
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

  async remove(at: CheckedFile): Promise<Result<null>> {
    const key = at.key;
    const head = await this.bucket.head(key);
    if (!head) return (await this.folders.isDir(key + "/")) ? refuse("isDirectory") : refuse("notFound");
    // Marked first, so the folder never vanishes in between.
    await this.folders.keepParentOf(key);
    await this.bucket.delete(key);
    return ok(null);
  }

  async makeDir(at: CheckedRoot): Promise<Result<null>> {
    const dir = at.key;
    if (at.path.segments.length === 0) return refuse("needsFolderName");
    // The prefix ends in `/`, so this covers the folder itself too.
    if (await this.folders.anyAncestorIsFile(dir)) return refuse("fileDirectoryClash");
    await this.bucket.put(dir, new Uint8Array(0));
    return ok(null);
  }

  async removeDir(at: CheckedRoot): Promise<Result<null>> {
    const dir = at.key;
    if (at.path.segments.length === 0) return refuse("needsFolderName");
    const [head, page] = await Promise.all([
      this.bucket.head(dir.slice(0, -1)),
      this.bucket.list({ prefix: dir, limit: 2 }),
    ]);
    if (head) return refuse("isFile");
    if (page.objects.length === 0) return refuse("notFound");
    if (page.objects.some((object) => object.key !== dir)) return refuse("folderNotEmpty");
    await this.folders.keepParentOf(dir);
    await this.bucket.delete(dir);
    return ok(null);
  }

  async stat(at: CheckedEntry): Promise<Result<Stat>> {
    if (at.path.segments.length === 0) return ok({ type: "dir" });
    const key = at.key;
    const [head, isDir] = await Promise.all([this.bucket.head(key), this.folders.isDir(key + "/")]);
    if (head) return ok({ type: "file", ...metaOf(head) });
    if (isDir) return ok({ type: "dir" });
    return refuse("notFound");
  }

  list(at: CheckedDir, options: StorageListOptions): Promise<Result<StorageListPage>> {
    return this.listing.list(at, options);
  }

  async move(from: CheckedFile, to: CheckedFile, overwrite: boolean): Promise<Result<null>> {
    const [src, dst] = [from.key, to.key];
    const source = await this.bucket.get(src);
    if (!source) return (await this.folders.isDir(src + "/")) ? refuse("cannotMoveDirectory") : refuse("notFound");
    const [ancestorIsFile, isDir, existing] = await Promise.all([
      this.folders.anyAncestorIsFile(dst),
      this.folders.isDir(dst + "/"),
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
    await this.folders.keepParentOf(src);
    await this.bucket.delete(src);
    return ok(null);
  }

  async prepareRoot(root: CheckedRoot): Promise<Result<null>> {
    const prefix = root.key;
    if (prefix === "") return ok(null);
    // The prefix ends in `/`, so this covers the folder itself too.
    if (await this.folders.anyAncestorIsFile(prefix)) return refuse("isFile");
    return ok(null);
  }
}
