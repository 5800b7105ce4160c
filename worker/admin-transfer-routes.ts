import type { Context, Hono } from "hono";
import { capObjectStub, rootJournalStub, rootRegistryStub } from "../durable-objects/object-stubs.ts";
import { listRootFiles, readBlob, readRootFile, transferRoot, writeImported } from "../durable-objects/vault-files.ts";
import { ARCHIVE_FORMAT, RELEASE, STATE_FORMAT } from "../shared/archive-format.ts";
import { contentTypeOf } from "../shared/content-type.ts";
import { refusal, refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { tokenKeyFingerprint } from "../shared/token-key.ts";
import type { AppEnv } from "./cap-stub.ts";
import { errorResponse } from "./http-error.ts";
import { readJsonBody } from "./json-body.ts";
import { jsonResponse } from "./json-response.ts";
import { registry } from "./oauth/oauth-common.ts";
import { readQuery } from "./query-params.ts";

/**
 * The admin routes a vault export and import are made of (docs/export-import.md):
 * many small bounded calls the CLI drives (a page of roots, caps or journal
 * rows, one file's bytes), never one request that moves a vault. Mounted on
 * the admin routes, behind their admin-token check.
 */

/** An import page's JSON: a page of caps with their children and audit lines. */
const IMPORT_JSON_BYTES = 512 * 1024;
const KEY_SHAPE = /^[0-9a-f]{64}$/;

type C = Context<AppEnv>;
const answer = (result: Result<unknown>) => (result.ok ? jsonResponse(result.value) : errorResponse(result.error));

function query<const N extends string>(c: C, names: N[]): Result<Record<N, string | null>> {
  return readQuery(c.req.url, names) as Result<Record<N, string | null>>;
}

async function body(c: C): Promise<Result<Record<string, unknown>>> {
  const read = await readJsonBody(c.req.raw, IMPORT_JSON_BYTES);
  if (!read.ok) return read;
  const value = read.value;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return refuse("expectedObject");
  return ok(value as Record<string, unknown>);
}

export function addTransferRoutes(admin: Hono<AppEnv>): void {
  /** What a vault is: its release, the state format it writes, and its token key's fingerprint (never the key). */
  admin.get("/state", async (c) => {
    const imports = await rootRegistryStub(c.env).importState();
    if (!imports.ok) return errorResponse(imports.error);
    return jsonResponse({
      release: RELEASE,
      stateFormat: STATE_FORMAT,
      archiveFormat: ARCHIVE_FORMAT,
      keyFingerprint: await tokenKeyFingerprint(c.env.CAPVAULT_TOKEN_KEY),
      ...imports.value,
    });
  });

  // ---- export ------------------------------------------------------------

  /** The token key itself: an archive must carry it, or no cap URL would verify after an import. */
  admin.get("/export/key", async (c) => {
    const fingerprint = await tokenKeyFingerprint(c.env.CAPVAULT_TOKEN_KEY);
    if (!fingerprint) return errorResponse(refusal("noTokenKey"));
    return jsonResponse({ tokenKey: c.env.CAPVAULT_TOKEN_KEY, keyFingerprint: fingerprint });
  });

  admin.get("/export/roots", async (c) => {
    const q = query(c, ["cursor"]);
    if (!q.ok) return errorResponse(q.error);
    return answer(await rootRegistryStub(c.env).exportRoots(q.value.cursor));
  });

  /** One cap's record, children and audit, read in one call to its object. */
  admin.get("/export/cap/:key", async (c) => {
    const key = c.req.param("key");
    if (!KEY_SHAPE.test(key)) return errorResponse(refusal("importMalformed"));
    return answer(await capObjectStub(c.env, key).exportState());
  });

  admin.get("/export/journal", async (c) => {
    const q = query(c, ["backend", "prefix", "table", "cursor"]);
    if (!q.ok) return errorResponse(q.error);
    const root = transferRoot(q.value.backend, q.value.prefix);
    if (!root.ok) return errorResponse(root.error);
    const journal = rootJournalStub(c.env, root.value.backend, root.value.prefix);
    if (q.value.table === "blobs") return answer(await journal.exportBlobs(q.value.cursor));
    return answer(await journal.exportTable(q.value.table ?? "", q.value.cursor));
  });

  /** A page of a root's files, each with the blob its journal keeps its current bytes as. */
  admin.get("/export/files", async (c) => {
    const q = query(c, ["backend", "prefix", "cursor"]);
    if (!q.ok) return errorResponse(q.error);
    const root = transferRoot(q.value.backend, q.value.prefix);
    if (!root.ok) return errorResponse(root.error);
    const { backend, prefix } = root.value;
    const page = await listRootFiles(c.env, backend, prefix, q.value.cursor);
    if (!page.ok) return errorResponse(page.error);
    const blobs = await rootJournalStub(c.env, backend, prefix).exportLiveBlobs(page.value.files.map((f) => f.path));
    if (!blobs.ok) return errorResponse(blobs.error);
    return jsonResponse({
      files: page.value.files.map((f) => ({ ...f, blob: blobs.value[f.path] ?? null })),
      cursor: page.value.cursor,
    });
  });

  admin.get("/export/file", async (c) => {
    const q = query(c, ["backend", "prefix", "path"]);
    if (!q.ok) return errorResponse(q.error);
    const file = await readRootFile(c.env, q.value.backend ?? "", q.value.prefix ?? "", q.value.path);
    if (!file.ok) return errorResponse(file.error);
    return new Response(file.value.body, {
      headers: {
        "content-type": "application/octet-stream",
        "content-length": String(file.value.size),
        "capvault-content-type": file.value.contentType,
      },
    });
  });

  admin.get("/export/blob", async (c) => {
    const q = query(c, ["backend", "blob"]);
    if (!q.ok) return errorResponse(q.error);
    const blob = await readBlob(c.env, q.value.backend ?? "", q.value.blob);
    if (!blob.ok) return errorResponse(blob.error);
    return new Response(blob.value.body, {
      headers: { "content-type": "application/octet-stream", "content-length": String(blob.value.size) },
    });
  });

  admin.get("/export/oauth", async (c) => {
    const q = query(c, ["cursor"]);
    if (!q.ok) return errorResponse(q.error);
    return answer(await registry(c).exportEntries(q.value.cursor));
  });

  // ---- import ------------------------------------------------------------

  admin.post("/import/begin", async (c) => {
    const b = await body(c);
    if (!b.ok) return errorResponse(b.error);
    // The CLI compares first and explains; this is the check that holds.
    const ours = await tokenKeyFingerprint(c.env.CAPVAULT_TOKEN_KEY);
    if (ours === null || b.value.keyFingerprint !== ours) return errorResponse(refusal("importKeyMismatch"));
    return answer(await rootRegistryStub(c.env).importBegin(String(b.value.archiveId ?? ""), b.value.merge === true));
  });

  admin.post("/import/roots", async (c) => {
    const b = await body(c);
    if (!b.ok) return errorResponse(b.error);
    return answer(await rootRegistryStub(c.env).stageRoots(String(b.value.archiveId ?? ""), b.value.roots));
  });

  admin.post("/import/caps", async (c) => {
    const b = await body(c);
    if (!b.ok) return errorResponse(b.error);
    return answer(await rootRegistryStub(c.env).stageCaps(String(b.value.archiveId ?? ""), b.value.caps));
  });

  /** The rest of a staged cap, a page a call: for a cap whose whole state is more than one call holds. */
  admin.post("/import/cap-page", async (c) => {
    const b = await body(c);
    if (!b.ok) return errorResponse(b.error);
    const { archiveId, key, children, audit } = b.value;
    return answer(await rootRegistryStub(c.env).stageCapPage(String(archiveId ?? ""), key, { children, audit }));
  });

  admin.post("/import/journal", async (c) => {
    const b = await body(c);
    if (!b.ok) return errorResponse(b.error);
    const { archiveId, backend, prefix, table, rows } = b.value;
    const writable = await rootRegistryStub(c.env).importWritable(String(archiveId ?? ""));
    if (!writable.ok) return errorResponse(writable.error);
    const root = transferRoot(backend, prefix);
    if (!root.ok) return errorResponse(root.error);
    const journal = rootJournalStub(c.env, root.value.backend, root.value.prefix);
    return answer(await journal.importTable(String(archiveId), root.value.backend, String(table), rows));
  });

  /** One file's bytes (`blobOnly`: a version blob, written at a path of its history and removed again). */
  admin.put("/import/file", async (c) => {
    const q = query(c, ["archiveId", "backend", "prefix", "path", "blob", "contentType", "blobOnly"]);
    if (!q.ok) return errorResponse(q.error);
    const writable = await rootRegistryStub(c.env).importWritable(q.value.archiveId ?? "");
    if (!writable.ok) return errorResponse(writable.error);
    const root = transferRoot(q.value.backend, q.value.prefix);
    if (!root.ok) return errorResponse(root.error);
    const { backend, prefix } = root.value;
    const length = Number(c.req.header("content-length") ?? "");
    if (!Number.isSafeInteger(length) || length < 0 || !c.req.raw.body) return errorResponse(refusal("lengthRequired"));
    // As every write judges it: R2 stores a type with a CR or LF and then fails every read of the file.
    const contentType = contentTypeOf(q.value.contentType, "application/octet-stream");
    if (!contentType.ok) return errorResponse(contentType.error);
    const blobOnly = q.value.blobOnly === "1";
    if (blobOnly && q.value.blob === null) return errorResponse(refusal("importMalformed"));
    const written = await writeImported(c.env, backend, prefix, q.value.path, c.req.raw.body, {
      length,
      contentType: contentType.value,
      keepAs: q.value.blob,
      blobOnly,
    });
    if (!written.ok) return errorResponse(written.error);
    if (written.value.inline && q.value.blob !== null) {
      const kept = await rootJournalStub(c.env, backend, prefix).importInlineBlob(q.value.blob);
      if (!kept.ok) return errorResponse(kept.error);
    }
    return jsonResponse({ written: true });
  });

  admin.post("/import/oauth", async (c) => {
    const b = await body(c);
    if (!b.ok) return errorResponse(b.error);
    const writable = await rootRegistryStub(c.env).importWritable(String(b.value.archiveId ?? ""));
    if (!writable.ok) return errorResponse(writable.error);
    return answer(await registry(c).importEntries(b.value.entries));
  });

  /** One step of giving up an import that has not begun its commit (`capvault import --abort`). */
  admin.post("/import/abort", async (c) => {
    const b = await body(c);
    if (!b.ok) return errorResponse(b.error);
    return answer(await rootRegistryStub(c.env).abortImport(String(b.value.archiveId ?? "")));
  });

  /** One step of the commit; the CLI repeats it until `done` (the registry's alarm finishes it otherwise). */
  admin.post("/import/commit", async (c) => {
    const b = await body(c);
    if (!b.ok) return errorResponse(b.error);
    return answer(await rootRegistryStub(c.env).commitImport(String(b.value.archiveId ?? "")));
  });
}
