import { parseByteRange, writeAllowed, etagListMatches } from "../shared/http-conditions.ts";
import { parseRelPath, storageKey, type RelPath } from "../shared/rel-path.ts";
import { fail, ok, type Result } from "../shared/result.ts";
import { compareUtf8 } from "../shared/utf8-order.ts";
import {
  DEFAULT_CONTENT_TYPE,
  type FileMeta,
  type ListEntry,
  type ListPage,
  type ReadOptions,
  type ReadOutcome,
  type Root,
  type StatOutcome,
  type StorageAdapter,
  type WriteOptions,
  type WriteOutcome,
} from "./storage-adapter.ts";

/** R2 deletes and lists move at most this many keys per call. */
const R2_PAGE = 1000;

function metaOf(object: R2Object): FileMeta {
  return {
    size: object.size,
    etag: object.etag,
    modified: object.uploaded.toISOString(),
    contentType: object.httpMetadata?.contentType ?? DEFAULT_CONTENT_TYPE,
  };
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
  constructor(private readonly bucket: R2Bucket) {}

  async read(root: Root, path: RelPath, options: ReadOptions): Promise<Result<ReadOutcome>> {
    const key = this.fileKey(root, path);
    if (!key.ok) return key;
    // Head first to judge the range against the current size, then fetch only
    // if the object is still that version; retry if it changed in between.
    for (let attempt = 0; attempt < 3; attempt++) {
      const head = await this.bucket.head(key.value);
      if (!head) return (await this.isDir(key.value + "/")) ? fail("conflict", "that path is a directory") : fail("not_found");
      const meta = metaOf(head);
      if (options.ifNoneMatch && etagListMatches(options.ifNoneMatch, meta.etag)) return ok({ status: "not_modified", meta });
      const range = parseByteRange(options.range, meta.size);
      if (range === "unsatisfiable") return ok({ status: "unsatisfiable", meta });
      const object = await this.bucket.get(key.value, {
        onlyIf: { etagMatches: meta.etag },
        ...(range ? { range: { offset: range.start, length: range.end - range.start + 1 } } : {}),
      });
      if (!object) return fail("not_found");
      if (!("body" in object)) continue;
      return ok({ status: "body", meta, body: object.body, range });
    }
    return fail("conflict", "the file kept changing while it was read");
  }

  async write(root: Root, path: RelPath, body: ReadableStream<Uint8Array>, options: WriteOptions): Promise<Result<WriteOutcome>> {
    const key = this.fileKey(root, path);
    if (!key.ok) return discard(body, key);
    const prefix = root.join("");
    const [ancestorIsFile, isDir, current] = await Promise.all([
      this.anyAncestorIsFile(prefix, path),
      this.isDir(key.value + "/"),
      this.bucket.head(key.value),
    ]);
    if (ancestorIsFile) return discard(body, fail("conflict", "a parent of that path is a file"));
    if (isDir) return discard(body, fail("conflict", "that path is a directory"));
    if (!writeAllowed(options, current?.etag ?? null)) return discard(body, fail("precondition_failed"));

    // R2 needs a body of known length; FixedLengthStream also refuses a body
    // that delivers more or fewer bytes than declared, so R2 never stores a
    // truncated file.
    const fixed = new FixedLengthStream(options.length);
    const piping = body.pipeTo(fixed.writable).catch(() => undefined);
    const onlyIf = new Headers();
    if (options.ifMatch !== undefined) onlyIf.set("if-match", options.ifMatch);
    if (options.ifNoneMatch !== undefined) onlyIf.set("if-none-match", options.ifNoneMatch);
    let stored: R2Object | null;
    try {
      stored = await this.bucket.put(key.value, fixed.readable, {
        httpMetadata: { contentType: options.contentType },
        ...(options.ifMatch !== undefined || options.ifNoneMatch !== undefined ? { onlyIf } : {}),
      });
    } catch {
      await piping;
      return fail("bad_request", "the body did not match its Content-Length");
    }
    await piping;
    // R2 re-checks the precondition atomically; null means it failed there.
    if (!stored) return fail("precondition_failed");
    return ok({ created: current === null, size: stored.size, etag: stored.etag });
  }

  async remove(root: Root, path: RelPath): Promise<Result<null>> {
    const key = this.fileKey(root, path);
    if (!key.ok) return key;
    const head = await this.bucket.head(key.value);
    if (!head) return (await this.isDir(key.value + "/")) ? fail("conflict", "that path is a directory") : fail("not_found");
    await this.bucket.delete(key.value);
    return ok(null);
  }

  async stat(root: Root, path: RelPath): Promise<Result<StatOutcome>> {
    if (path.segments.length === 0) return ok({ type: "dir" });
    const key = this.fileKey(root, path);
    if (!key.ok) return key;
    const [head, isDir] = await Promise.all([this.bucket.head(key.value), this.isDir(key.value + "/")]);
    if (head) return ok({ type: "file", ...metaOf(head) });
    if (isDir) return ok({ type: "dir" });
    return fail("not_found");
  }

  async list(root: Root, path: RelPath, options: { after: string | null; limit: number }): Promise<Result<ListPage>> {
    const dir = storageKey(root.join(""), path, "dir");
    if (!dir.ok) return dir;
    if (path.segments.length > 0 && options.after === null) {
      const [head, isDir] = await Promise.all([this.bucket.head(dir.value.slice(0, -1)), this.isDir(dir.value)]);
      if (head) return fail("conflict", "that path is a file");
      if (!isDir) return fail("not_found");
    }
    const collected: ListEntry[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    // Resume after the last name by key order. A directory `d` reappears as
    // the delimited prefix `d/` (its keys sort after `d`); the name filter
    // below drops it, so every directory is listed exactly once.
    const startAfter = options.after === null ? undefined : dir.value + options.after;
    for (;;) {
      const page = await this.bucket.list({
        prefix: dir.value,
        delimiter: "/",
        limit: R2_PAGE,
        ...(cursor ? { cursor } : startAfter ? { startAfter } : {}),
      });
      for (const object of page.objects) {
        const name = object.key.slice(dir.value.length);
        if (accept(name, options.after, seen)) {
          collected.push({ name, type: "file", size: object.size, etag: object.etag, modified: object.uploaded.toISOString() });
        }
      }
      for (const prefix of page.delimitedPrefixes) {
        const name = prefix.slice(dir.value.length, -1);
        if (accept(name, options.after, seen)) collected.push({ name, type: "dir" });
      }
      if (!page.truncated || collected.length > options.limit) break;
      cursor = page.cursor;
    }
    collected.sort((a, b) => compareUtf8(a.name, b.name));
    const entries = collected.slice(0, options.limit);
    const more = collected.length > options.limit;
    return ok({ entries, next: more ? entries[entries.length - 1]!.name : null });
  }

  async move(root: Root, from: RelPath, to: RelPath, overwrite: boolean): Promise<Result<null>> {
    const src = this.fileKey(root, from);
    if (!src.ok) return src;
    const dst = this.fileKey(root, to);
    if (!dst.ok) return dst;
    const source = await this.bucket.get(src.value);
    if (!source) return (await this.isDir(src.value + "/")) ? fail("conflict", "cannot move a directory") : fail("not_found");
    const [ancestorIsFile, isDir, existing] = await Promise.all([
      this.anyAncestorIsFile(root.join(""), to),
      this.isDir(dst.value + "/"),
      this.bucket.head(dst.value),
    ]);
    const refusal =
      ancestorIsFile ? "a parent of the destination is a file"
      : isDir ? "the destination is a directory"
      : existing && !overwrite ? "the destination exists"
      : null;
    if (refusal) {
      await source.body.cancel();
      return fail("conflict", refusal);
    }
    if (src.value === dst.value) {
      await source.body.cancel();
      return ok(null);
    }
    // R2 has no rename: copy, then delete the source only once the copy is
    // stored, so a failed copy never loses the source.
    const fixed = new FixedLengthStream(source.size);
    const piping = source.body.pipeTo(fixed.writable).catch(() => undefined);
    try {
      await this.bucket.put(dst.value, fixed.readable, {
        httpMetadata: source.httpMetadata ?? {},
        ...(overwrite ? {} : { onlyIf: new Headers({ "if-none-match": "*" }) }),
      });
    } catch {
      await piping;
      return fail("unavailable", "the copy failed; the source is untouched");
    }
    await piping;
    await this.bucket.delete(src.value);
    return ok(null);
  }

  async prepareRoot(root: Root): Promise<Result<null>> {
    const prefix = root.join("");
    if (prefix === "") return ok(null);
    const asPath = parseRelPath(prefix);
    if (!asPath.ok) return asPath;
    const [ancestorIsFile, head] = await Promise.all([
      this.anyAncestorIsFile("", asPath.value),
      this.bucket.head(prefix.slice(0, -1)),
    ]);
    if (ancestorIsFile || head) return fail("conflict", "that path is a file");
    return ok(null);
  }

  private fileKey(root: Root, path: RelPath): Result<string> {
    if (path.segments.length === 0) return fail("invalid_path", "a file operation needs a file name");
    return storageKey(root.join(""), path, "file");
  }

  private async isDir(dirKey: string): Promise<boolean> {
    const page = await this.bucket.list({ prefix: dirKey, limit: 1 });
    return page.objects.length > 0;
  }

  private async anyAncestorIsFile(prefix: string, path: RelPath): Promise<boolean> {
    const ancestors = path.segments.slice(0, -1).map((_, i) => prefix + path.segments.slice(0, i + 1).join("/"));
    const heads = await Promise.all(ancestors.map((key) => this.bucket.head(key)));
    return heads.some((head) => head !== null);
  }
}

/** Keeps only names a cap could address (keys written around the vault may not be), each once. */
function accept(name: string, after: string | null, seen: Set<string>): boolean {
  if (seen.has(name)) return false;
  if (after !== null && compareUtf8(name, after) <= 0) return false;
  const parsed = parseRelPath(name);
  if (!parsed.ok || parsed.value.segments.length !== 1 || parsed.value.text !== name) return false;
  seen.add(name);
  return true;
}

async function discard<T>(body: ReadableStream<Uint8Array>, result: Result<T>): Promise<Result<T>> {
  await body.cancel().catch(() => undefined);
  return result;
}
