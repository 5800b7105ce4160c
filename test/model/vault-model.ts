import { refusal } from "../../shared/refusals.ts";
import { parseRelPath } from "../../shared/rel-path.ts";
import type { Right } from "../../shared/rights.ts";
import { FilesModel } from "./files-model.ts";
import { type ModelVersion, parseVersionId } from "./journal-model.ts";
import type { CapPick, Json, ModelAnswer, VaultRequest } from "./model-requests.ts";
import {
  empty,
  error,
  fileKey,
  hex,
  json,
  MAX_VERSION_LIMIT,
  NO_SUCH_VERSION,
  noSuchCap,
  type Outcome,
  parseLimit,
  scopeOf,
  versionView,
} from "./model-state.ts";

export type { CapPick, Json, ModelAnswer, Observation, QueryFault, VaultRequest } from "./model-requests.ts";
export { hex, md5Hex } from "./model-state.ts";

export class VaultModel extends FilesModel {
  /** How many caps were minted in this sequence (roles are `0 .. capCount-1`). */
  get capCount(): number {
    return this.caps.length;
  }

  /** The newest version id of the root so far (lets a test name existing, recent and unknown ids). */
  get newestVersionId(): number {
    return this.journal.newestId;
  }

  /** The version ids cap `role` can name now, newest first (none for a dead cap). */
  versionIdsOf(role: number): number[] {
    const cap = this.caps[role];
    return cap?.alive ? this.journal.idsIn(scopeOf(cap), cap.historyFrom) : [];
  }

  /** Every path (relative to the root cap) that ever had a version. */
  get versionedPaths(): string[] {
    return this.journal.paths;
  }

  /** The etag a file at `path` of cap `role` has now, if any (lets a test send a current If-Match). */
  etagAt(role: number, path: string | null): string | null {
    const cap = this.caps[role];
    const parsed = parseRelPath(path);
    if (!cap || !parsed.ok || parsed.value.segments.length === 0) return null;
    return this.files.get(cap.levels.join("") + parsed.value.text)?.etag ?? null;
  }

  apply(request: VaultRequest): ModelAnswer {
    // Malformed tokens are refused by the router, before any body is read.
    if ("bogus" in request.cap && request.cap.bogus === "malformed") return { observation: noSuchCap() };
    switch (request.op) {
      case "info":
        return this.info(request.cap);
      case "revoke":
        return this.revoke(request.cap);
      case "read":
        return this.read(request);
      case "write":
        return this.write(request);
      case "delete":
        return this.remove(request);
      case "stat":
        return this.stat(request);
      case "mkdir":
        return this.mkdir(request);
      case "rmdir":
        return this.rmdir(request);
      case "list":
        return this.list(request);
      case "move":
        return this.move(request);
      case "subdir":
        return this.subdir(request);
      case "children":
        return this.childrenOf(request.cap);
      case "revokeChild":
        return this.revokeChild(request.cap, request.child);
      case "versions":
        return this.versions(request);
      case "readVersion":
        return this.readVersion(request);
      case "restore":
        return this.restore(request);
      case "redact":
        return this.redact(request);
    }
  }

  // ---- versions ----------------------------------------------------------

  /** A file's versions, newest first; a deleted file's too. The cursor is the id of the last one shown. */
  protected versions(request: VaultRequest & { op: "versions" }): ModelAnswer {
    const access = this.authorize(request.cap, ["read"], request.path, { fault: request.queryFault });
    if (!access.ok) return { observation: access.observation };
    const { cap, path } = access.value;
    const limit = parseLimit(request.limit, MAX_VERSION_LIMIT);
    if (limit === null) return { observation: error("bad_request") };
    let before: number | null = null;
    if (request.cursor !== undefined && request.cursor !== "") {
      before = parseVersionId(request.cursor);
      if (before === null) return { observation: error("bad_request") };
    }
    const key = fileKey(cap, path);
    if (!key.ok) return { observation: key.observation };
    const rows = this.journal.history(this.journalPath(key.value), before, limit + 1, cap.historyFrom);
    const page = rows.slice(0, limit);
    // Null on the last page (README), so a page that is exactly full but last says so.
    const cursor = rows.length > limit ? String(page.at(-1)!.id) : null;
    return { observation: json(200, { versions: page.map(versionView), cursor }), cursor };
  }

  protected readVersion(request: VaultRequest & { op: "readVersion" }): ModelAnswer {
    const found = this.findVersion(request.cap, "read", request.id);
    if (!found.ok) return { observation: found.observation };
    const { blob, contentType } = found.value;
    const headers = { "content-type": contentType, "content-length": String(blob.bytes.length) };
    return { observation: { status: 200, headers, body: { bytes: hex(blob.bytes) } } };
  }

  /** A restore is a write of the version's bytes to its path, through this cap, as the cap would write them. */
  protected restore(request: VaultRequest & { op: "restore" }): ModelAnswer {
    // Read as well as write: a restore's answer describes the old bytes.
    if (this.live(request.cap)?.rights.includes("read") === false) return { observation: error("forbidden") };
    const found = this.findVersion(request.cap, "write", request.id);
    if (!found.ok) return { observation: found.observation };
    const { blob, contentType, path } = found.value;
    const cap = this.live(request.cap)!;
    const relative = path.slice(scopeOf(cap).length);
    const written = this.write({ op: "write", cap: request.cap, path: relative, content: blob.bytes, contentType });
    // Answered 200 whether the file was there or not: a restore brings back, it does not create.
    const { observation } = written;
    if (observation.status !== 200 && observation.status !== 201) return { observation };
    // It names the cap-relative path it wrote: the caller named only a version id.
    const body: Json = { path: relative, ...(observation.body as { [key: string]: Json }) };
    return { observation: { ...observation, status: 200, body } };
  }

  /** Destroys the bytes (for every version sharing them) and their hash; the records stay. Twice is fine. */
  protected redact(request: VaultRequest & { op: "redact" }): ModelAnswer {
    const found = this.findVersion(request.cap, "delete", request.id, { redactedToo: true });
    if (!found.ok) return { observation: found.observation };
    const { blob } = found.value;
    // Its bytes are also a version's from before this cap's mint: that history is not its to destroy.
    if (!blob.redacted && this.journal.heldBefore(blob, this.live(request.cap)!.historyFrom))
      return { observation: error("forbidden", {}, refusal("redactBeforeFloor").message) };
    blob.redacted = true;
    return { observation: empty(204) };
  }

  /** The right first, then the id: unknown, malformed and out of scope answer alike; then whether bytes are left. */
  protected findVersion(
    pick: CapPick,
    right: Right,
    rawId: string,
    { redactedToo = false } = {},
  ): Outcome<ModelVersion> {
    const cap = this.live(pick);
    if (!cap) return { ok: false, observation: noSuchCap() };
    if (!cap.rights.includes(right)) return { ok: false, observation: error("forbidden") };
    const row = this.journal.find(rawId, scopeOf(cap), cap.historyFrom);
    if (!row) return { ok: false, observation: error("not_found", {}, NO_SUCH_VERSION) };
    if (row.blob.redacted && !redactedToo) return { ok: false, observation: error("not_found") };
    return { ok: true, value: row };
  }
}
