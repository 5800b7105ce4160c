import { refuse } from "../shared/refusals.ts";
import { parseRelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Backend } from "../shared/wire-types.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import type { StorageAdapter, VersionBytes } from "../storage-adapters/storage-adapter.ts";
import { isBlobName } from "../storage-adapters/version-blobs.ts";
import { isRootLevels } from "./import-check.ts";
import { decodeTreeCursor, encodeCursor } from "./list-cursor.ts";
import type { ObjectEnv } from "./object-env.ts";
import { checkKey } from "./path-check.ts";

/**
 * A root's files as a vault export reads them and an import writes them
 * (docs/export-import.md), through the storage adapter on either backend,
 * each path checked by the one path check. Admin routes only: the root is
 * named by its backend and prefix, as `GET /admin/roots` shows them.
 */

/** Files per listing page. */
export const FILES_PAGE = 1000;

/**
 * The storage root an admin route names (`backend` and `prefix`, as `GET /admin/roots` shows them),
 * judged as an archive's root levels are. The journal routes use it too: a journal is a Durable
 * Object of its own, so a name that could be no root's must not make one.
 */
export function transferRoot(backend: unknown, prefix: unknown): Result<{ backend: Backend; prefix: string }> {
  if (backend !== "r2" && backend !== "disk") return refuse("backendChoice");
  if (typeof prefix !== "string" || !isRootLevels([prefix])) return refuse("importMalformed");
  return ok({ backend, prefix });
}

function storageAt(env: ObjectEnv, backend: string, prefix: unknown): Result<StorageAdapter> {
  const root = transferRoot(backend, prefix);
  if (!root.ok) return root;
  const storage = selectStorage(env, root.value.backend);
  return storage ? ok(storage) : refuse("backendNotDeployed", { backend: root.value.backend });
}

/** A page of the files below a root (every depth), with sizes; paths relative to the root. */
export async function listRootFiles(
  env: ObjectEnv,
  backend: string,
  prefix: string,
  rawCursor: string | null,
): Promise<Result<{ files: { path: string; size: number }[]; cursor: string | null }>> {
  const storage = storageAt(env, backend, prefix);
  if (!storage.ok) return storage;
  const after = decodeTreeCursor(rawCursor);
  if (!after.ok) return after;
  const root = parseRelPath("");
  if (!root.ok) return root;
  const dir = checkKey([prefix], root.value, "dir");
  if (!dir.ok) return dir;
  const page = await storage.value.list(dir.value, { after: after.value, limit: FILES_PAGE, depth: 0 });
  if (!page.ok) return page.error.code === "not_found" ? ok({ files: [], cursor: null }) : page;
  const files = page.value.entries.filter((e) => e.type === "file").map((e) => ({ path: e.name, size: e.size ?? 0 }));
  return ok({ files, cursor: page.value.next === null ? null : encodeCursor(page.value.next) });
}

/** One file's bytes and content type. */
export async function readRootFile(env: ObjectEnv, backend: string, prefix: string, path: string | null) {
  const storage = storageAt(env, backend, prefix);
  if (!storage.ok) return storage;
  const at = fileAt(prefix, path);
  if (!at.ok) return at;
  const read = await storage.value.read(at.value, {});
  if (!read.ok) return read;
  if (read.value.status !== "body") return refuse("unavailable");
  return ok({ body: read.value.body, size: read.value.meta.size, contentType: read.value.meta.contentType });
}

/** A kept version's bytes, by its blob name (from the journal's export). */
export async function readBlob(env: ObjectEnv, backend: string, blob: string | null): Promise<Result<VersionBytes>> {
  const storage = storageAt(env, backend, "");
  if (!storage.ok) return storage;
  if (!isBlobName(blob)) return refuse("importMalformed");
  return storage.value.readVersion(blob);
}

export interface ImportWrite {
  length: number;
  contentType: string;
  /** Keep the bytes as this version blob too (the file's current blob in its journal). */
  keepAs: string | null;
  /** Only the blob is wanted: the file goes again once written (a version no live file holds). */
  blobOnly: boolean;
}

/**
 * Writes one imported file, or one version blob by writing it at a path of
 * its history and removing the file again: the adapter makes version blobs
 * only as the copy of a write, on both backends. No cap over the root is live
 * while an import writes (the commit comes last), so no holder sees either step.
 * `inline`: the backend kept the blob in no storage (R2's empty versions).
 */
export async function writeImported(
  env: ObjectEnv,
  backend: string,
  prefix: string,
  path: string | null,
  body: ReadableStream<Uint8Array>,
  write: ImportWrite,
): Promise<Result<{ inline: boolean }>> {
  const storage = storageAt(env, backend, prefix);
  if (!storage.ok) return storage;
  const at = fileAt(prefix, path);
  if (!at.ok) return at;
  if (write.keepAs !== null && !isBlobName(write.keepAs)) return refuse("importMalformed");
  const stored = await storage.value.write(at.value, body, {
    length: write.length,
    contentType: write.contentType,
    keepAs: write.keepAs,
  });
  if (!stored.ok) return stored;
  if (write.blobOnly) {
    const removed = await storage.value.remove(at.value);
    if (!removed.ok) return removed;
    await dropEmptyFolders(storage.value, prefix, at.value.path.segments);
  }
  return ok({ inline: stored.value.inline !== undefined });
}

/** The folders a blob-only write made, deepest first, while they are empty (a folder that holds anything stays). */
async function dropEmptyFolders(storage: StorageAdapter, prefix: string, segments: readonly string[]): Promise<void> {
  for (let depth = segments.length - 1; depth >= 1; depth--) {
    const folder = parseRelPath(segments.slice(0, depth).join("/"));
    if (!folder.ok) return;
    const at = checkKey([prefix], folder.value, "childRoot");
    if (!at.ok || !(await storage.removeDir(at.value)).ok) return;
  }
}

function fileAt(prefix: string, raw: string | null) {
  const path = parseRelPath(raw);
  if (!path.ok) return path;
  if (path.value.segments.length === 0) return refuse("needsFileName");
  return checkKey([prefix], path.value, "file");
}

export type { Backend };
