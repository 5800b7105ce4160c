/**
 * A pure, in-memory reference model of capvault's HTTP contract (README.md, "API"),
 * used by the bisimulation test (test/node/bisimulation.node.test.ts): the
 * same request goes to this model, to an R2-backed cap and to a disk-backed
 * cap, and the three observations must be identical.
 *
 * The model is a function of history only: a map of files keyed by their
 * full storage key, a set of kept folders, and a tree of caps. It knows
 * nothing of R2 keys, delimiters, markers, descriptors or Durable Objects. A
 * directory exists while a file or a kept folder lies at or beneath it; a
 * folder is kept once made (mkdir) or once a file left it (delete, move), until
 * removed while empty (rmdir); a cap's root always exists. Paths are judged by the ONE parser,
 * `parseRelPath`, never by a second one; the other shared pure helpers
 * (UTF-8 order, byte ranges, etag lists, grant requests) are used as is.
 *
 * What is inherently per instance is already normalised in its answers:
 * tokens, urls and ids become `<token:ROLE>`, `<url:ROLE>`, `<id:ROLE>`
 * (a role is the mint order within one sequence, 0 being the root),
 * timestamps become `<time>` and list cursors `<cursor>`. A `message` of
 * `null` means the contract does not fix it (only its code is compared).
 *
 * @example
 * const model = new VaultModel("bisim/000001/", "bisim");
 * const { observation } = model.apply({ op: "stat", cap: { role: 0 }, path: "" });
 * // observation: { status: 200, headers: { "content-type": "application/json" }, body: { type: "dir" } }
 */
import { createHash } from "node:crypto";
import type { ErrorCode } from "../../shared/error-codes.ts";
import { parseGrantRequest } from "../../shared/grant-request.ts";
import { etagListMatches, parseByteRange, writeAllowed } from "../../shared/http-conditions.ts";
import { defaultMessage, refusal } from "../../shared/refusals.ts";
import { MAX_KEY_BYTES, parseRelPath, type RelPath, utf8Length } from "../../shared/rel-path.ts";
import { DEFAULT_RETENTION } from "../../shared/retention.ts";
import { isSubset, RIGHTS, type Right } from "../../shared/rights.ts";
import { compareUtf8 } from "../../shared/utf8-order.ts";
import { type ModelBlob, ModelJournal, type ModelVersion, parseVersionId } from "./journal-model.ts";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What a client can observe of one response, in comparable form. */
export interface Observation {
  status: number;
  /** Lower-case names; only headers the contract fixes (see `comparedHeaders`). */
  headers: Record<string, string>;
  /** Parsed JSON, `{ bytes: hex }` for file content, or `null` for an empty body. */
  body: Json;
}

/** A cap named by its role in the sequence, or a token that names no cap. */
export type CapPick = { role: number } | { bogus: "unknown" | "malformed" };

/**
 * How the `path` query parameter arrived, when not plainly: percent-encoding
 * that decodes to no string (a lone surrogate), or the parameter given twice.
 */
export type QueryFault = "undecodable_path" | "repeated_path";

/** One HTTP request, as data. Paths are the strings the server receives after its one decoding. */
export type VaultRequest =
  | { op: "info"; cap: CapPick }
  | { op: "revoke"; cap: CapPick }
  | { op: "read"; cap: CapPick; path: string | null; queryFault?: QueryFault; range?: string; ifNoneMatch?: string }
  | {
      op: "write";
      cap: CapPick;
      path: string | null;
      queryFault?: QueryFault;
      content: Uint8Array;
      /** Absent: no Content-Type header. Absent or empty, the file is `application/octet-stream`. */
      contentType?: string;
      ifMatch?: string;
      ifNoneMatch?: string;
    }
  | { op: "delete"; cap: CapPick; path: string | null; queryFault?: QueryFault }
  | { op: "stat"; cap: CapPick; path: string | null; queryFault?: QueryFault }
  | { op: "mkdir"; cap: CapPick; path: string | null; queryFault?: QueryFault }
  | { op: "rmdir"; cap: CapPick; path: string | null; queryFault?: QueryFault }
  | {
      op: "list";
      cap: CapPick;
      path: string | null;
      queryFault?: QueryFault;
      limit?: string;
      cursor?: string;
      depth?: string;
    }
  /** `body` is the raw JSON text sent. */
  | { op: "move"; cap: CapPick; body: string }
  | { op: "subdir"; cap: CapPick; body: string }
  | { op: "children"; cap: CapPick }
  | { op: "revokeChild"; cap: CapPick; child: CapPick }
  // ---- versions (README.md, "Versions and undo"); `id` is the raw path segment sent ----
  | { op: "versions"; cap: CapPick; path: string | null; queryFault?: QueryFault; limit?: string; cursor?: string }
  | { op: "readVersion"; cap: CapPick; id: string }
  | { op: "restore"; cap: CapPick; id: string }
  | { op: "redact"; cap: CapPick; id: string };
// ---- quotas (being built on another branch): their requests join this union here, and `apply` below ----

export interface ModelAnswer {
  observation: Observation;
  /** For a list: the cursor to send for the next page (the model's own, opaque), or null; for versions, an id. */
  cursor?: string | null;
  /** For a successful subdir: the role of the new cap. */
  minted?: number;
}

const DEFAULT_CONTENT_TYPE = "application/octet-stream";
const MAX_LIST_LIMIT = 1000;
const MAX_VERSION_LIMIT = 100;

/** The contract's code → status table (worker/http-error.ts states it for the implementation). */
const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  invalid_path: 400,
  absolute_path: 400,
  path_escapes: 400,
  unauthorized: 401,
  forbidden: 403,
  outside_root: 403,
  no_such_cap: 404,
  not_found: 404,
  conflict: 409,
  length_required: 411,
  precondition_failed: 412,
  too_large: 413,
  range_not_satisfiable: 416,
  quota_exceeded: 507,
  unavailable: 503,
};

/** Codes whose message the contract fixes; every other message is left unspecified. */
const FIXED_MESSAGES = new Set<ErrorCode>(["no_such_cap", "path_escapes", "absolute_path", "outside_root"]);
/** The one answer for an id a cap may not name (README: unknown, malformed, foreign and out of scope alike). */
const NO_SUCH_VERSION = refusal("noSuchVersion").message;

interface ModelFile {
  bytes: Uint8Array;
  etag: string;
  sha256: string;
  contentType: string;
  /** The bytes its versions point at (a move carries them along, a delete points at them). */
  blob: ModelBlob;
}

interface ModelCap {
  role: number;
  parent: number | null;
  /** Root levels as the contract builds them: the admin prefix, then one `path/` per subdir. */
  levels: string[];
  rights: Right[];
  label: string | null;
  /** Whether it has an expiry (its time is normalised away; none expires during a test). */
  expires: boolean;
  alive: boolean;
  /** The path it was minted for, relative to its parent (`children` shows it). */
  path: string;
  /** Live child records, in mint order. */
  children: number[];
  /** Its quota chain: its own rule and its ancestors', each over a key prefix (none: unlimited). */
  quotas: { prefix: string; maxBytes: number | null; maxFiles: number | null }[];
  /** The oldest version id it sees: 0 for the root; one past the newest at its mint, or its parent's with `history: "all"`. */
  historyFrom: number;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; observation: Observation };

const MODEL_CURSOR = "model-cursor:";

export class VaultModel {
  private readonly files = new Map<string, ModelFile>();
  /** Kept folders by key (no trailing `/`): they exist while empty. */
  private readonly dirs = new Set<string>();
  /**
   * Superseded content, by its bytes, with the key it was current at: quotas count it while a version still
   * points at it (not pruned) and it is not redacted, each set of bytes once, as the journal's ledger does.
   */
  private readonly kept = new Map<ModelBlob, { key: string; size: number }>();
  private readonly caps: ModelCap[] = [];
  private readonly journal: ModelJournal;

  /**
   * @param prefix the root cap's prefix as the admin minted it, ending in `/`
   *   (it counts towards the 1,024-byte key limit, so it matters)
   * @param label the root cap's label
   * @param keepVersions the root's retention (versions kept per path)
   */
  constructor(prefix: string, label: string | null, keepVersions = DEFAULT_RETENTION.keepVersions) {
    this.journal = new ModelJournal(keepVersions);
    this.caps.push({
      role: 0,
      parent: null,
      levels: [prefix],
      rights: [...RIGHTS],
      label,
      expires: false,
      alive: true,
      path: "",
      children: [],
      quotas: [],
      historyFrom: 0,
    });
  }

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

  // ---- caps --------------------------------------------------------------

  private info(pick: CapPick): ModelAnswer {
    const cap = this.live(pick);
    if (!cap) return { observation: noSuchCap() };
    return {
      observation: json(200, {
        id: idOf(cap.role),
        rights: cap.rights,
        label: cap.label,
        createdAt: "<time>",
        expiresAt: cap.expires ? "<time>" : null,
        parent: cap.parent === null ? null : idOf(cap.parent),
        // The random sequences mint bearer caps only; holder-bound ones are tested apart (issue 20).
        holder: null,
        limits: effective(cap.quotas),
        usage: this.usage(cap.levels.join("")),
      }),
    };
  }

  /** What a cap's subtree holds, as quotas count it: live bytes plus superseded bytes kept, and live files. */
  private usage(prefix: string): { bytes: number; files: number } {
    let bytes = 0;
    let files = 0;
    for (const [key, file] of this.files)
      if (key.startsWith(prefix)) {
        bytes += file.bytes.length;
        files += 1;
      }
    for (const [blob, { key, size }] of this.kept)
      if (key.startsWith(prefix) && !blob.redacted && this.journal.holds(blob)) bytes += size;
    return { bytes, files };
  }

  private supersede(key: string, file: ModelFile): void {
    this.kept.set(file.blob, { key, size: file.bytes.length });
  }

  private revoke(pick: CapPick): ModelAnswer {
    const cap = this.live(pick);
    if (!cap) return { observation: noSuchCap() };
    this.killSubtree(cap);
    if (cap.parent !== null) this.forgetChild(this.caps[cap.parent]!, cap.role);
    return { observation: empty(204) };
  }

  private subdir(request: VaultRequest & { op: "subdir" }): ModelAnswer {
    if (!this.live(request.cap)) return { observation: noSuchCap() };
    const body = parseJsonBody(request.body);
    if (!body.ok) return { observation: body.observation };
    const grant = parseGrantRequest(body.value);
    if (!grant.ok) return { observation: error(grant.error.code) };
    const access = this.authorize(request.cap, ["subdir"], grant.value.path, { rootAllowed: true });
    if (!access.ok) return { observation: access.observation };
    const { cap, path } = access.value;
    const rights = grant.value.rights ?? cap.rights;
    if (!isSubset(rights, cap.rights)) return { observation: error("forbidden") };
    const levels = path.text === "" ? cap.levels : [...cap.levels, `${path.text}/`];
    const rootKey = levels.join("");
    if (utf8Length(rootKey) >= MAX_KEY_BYTES) return { observation: error("invalid_path") };
    // A child's limits are never looser than its parent's (it may set one its parent lacks).
    const own = { maxBytes: grant.value.limits?.maxBytes ?? null, maxFiles: grant.value.limits?.maxFiles ?? null };
    const inherited = effective(cap.quotas);
    if (
      (own.maxBytes !== null && inherited.maxBytes !== null && own.maxBytes > inherited.maxBytes) ||
      (own.maxFiles !== null && inherited.maxFiles !== null && own.maxFiles > inherited.maxFiles)
    )
      return { observation: error("bad_request") };
    // The new root must not be a file, nor lie beneath one.
    if (this.someAncestorIsFile(rootKey)) return { observation: error("conflict") };

    const role = this.caps.length;
    this.caps.push({
      role,
      parent: cap.role,
      levels,
      rights,
      label: grant.value.label,
      expires: cap.expires || grant.value.ttlSeconds !== null,
      alive: true,
      path: path.text,
      children: [],
      quotas:
        own.maxBytes === null && own.maxFiles === null ? cap.quotas : [...cap.quotas, { prefix: rootKey, ...own }],
      historyFrom:
        grant.value.history === "all" ? cap.historyFrom : Math.max(this.journal.newestId + 1, cap.historyFrom),
    });
    cap.children.push(role);
    return {
      observation: json(201, {
        token: `<token:${role}>`,
        url: `<url:${role}>`,
        id: idOf(role),
        rights,
        expiresAt: this.caps[role]!.expires ? "<time>" : null,
      }),
      minted: role,
    };
  }

  private childrenOf(pick: CapPick): ModelAnswer {
    const cap = this.live(pick);
    if (!cap) return { observation: noSuchCap() };
    if (!cap.rights.includes("subdir")) return { observation: error("forbidden") };
    const children = cap.children.map((role) => {
      const child = this.caps[role]!;
      return {
        id: idOf(role),
        label: child.label,
        path: child.path,
        rights: child.rights,
        createdAt: "<time>",
        expiresAt: child.expires ? "<time>" : null,
      };
    });
    return { observation: json(200, { children, cursor: null }) };
  }

  private revokeChild(pick: CapPick, childPick: CapPick): ModelAnswer {
    const cap = this.live(pick);
    if (!cap) return { observation: noSuchCap() };
    if (!cap.rights.includes("subdir")) return { observation: error("forbidden") };
    if (!("role" in childPick) || !cap.children.includes(childPick.role)) return { observation: error("not_found") };
    this.killSubtree(this.caps[childPick.role]!);
    this.forgetChild(cap, childPick.role);
    return { observation: empty(204) };
  }

  // ---- files -------------------------------------------------------------

  private read(request: VaultRequest & { op: "read" }): ModelAnswer {
    const access = this.authorize(request.cap, ["read"], request.path, { fault: request.queryFault });
    if (!access.ok) return { observation: access.observation };
    const key = fileKey(access.value.cap, access.value.path);
    if (!key.ok) return { observation: key.observation };
    const file = this.files.get(key.value);
    if (!file) return { observation: this.isDir(key.value) ? error("conflict") : error("not_found") };
    const validators = { etag: `"${file.etag}"`, "last-modified": "<time>", "accept-ranges": "bytes" };
    if (request.ifNoneMatch && etagListMatches(request.ifNoneMatch, file.etag)) {
      return { observation: { status: 304, headers: validators, body: null } };
    }
    const size = file.bytes.length;
    const range = parseByteRange(request.range, size);
    if (range === "unsatisfiable") {
      return { observation: error("range_not_satisfiable", { ...validators, "content-range": `bytes */${size}` }) };
    }
    const bytes = range ? file.bytes.subarray(range.start, range.end + 1) : file.bytes;
    const headers: Record<string, string> = {
      ...validators,
      "content-type": file.contentType,
      "content-length": String(bytes.length),
    };
    if (range) headers["content-range"] = `bytes ${range.start}-${range.end}/${size}`;
    return { observation: { status: range ? 206 : 200, headers, body: { bytes: hex(bytes) } } };
  }

  private write(request: VaultRequest & { op: "write" }): ModelAnswer {
    const access = this.authorize(request.cap, ["write"], request.path, { fault: request.queryFault });
    if (!access.ok) return { observation: access.observation };
    // Without read, a condition may only be `*`: an etag would test guesses at the content.
    const conditions = [request.ifMatch, request.ifNoneMatch].filter((h) => h !== undefined);
    if (!access.value.cap.rights.includes("read") && conditions.some((h) => h.trim() !== "*"))
      return { observation: error("forbidden") };
    const key = fileKey(access.value.cap, access.value.path);
    if (!key.ok) return { observation: key.observation };
    // Quotas are checked before storage is: before any conflict or condition.
    for (const rule of access.value.cap.quotas) {
      const used = this.usage(rule.prefix);
      if (rule.maxBytes !== null && used.bytes + request.content.length > rule.maxBytes)
        return { observation: error("quota_exceeded") };
      if (rule.maxFiles !== null && used.files + (this.files.has(key.value) ? 0 : 1) > rule.maxFiles)
        return { observation: error("quota_exceeded") };
    }
    // A file where a folder is needed, anywhere above it (the cap's own root included), or the reverse.
    if (this.someAncestorIsFile(key.value)) return { observation: error("conflict") };
    if (this.isDir(key.value)) return { observation: error("conflict") };
    const current = this.files.get(key.value) ?? null;
    if (!writeAllowed({ ifMatch: request.ifMatch, ifNoneMatch: request.ifNoneMatch }, current)) {
      return { observation: error("precondition_failed") };
    }
    const etag = md5Hex(request.content);
    const sha256 = createHash("sha256").update(request.content).digest("hex");
    if (current) this.supersede(key.value, current);
    const bytes = request.content.slice();
    const file = { bytes, etag, sha256, contentType: request.contentType || DEFAULT_CONTENT_TYPE };
    const blob: ModelBlob = { bytes, redacted: false };
    this.files.set(key.value, { ...file, blob });
    const { cap } = access.value;
    this.journal.write(this.journalPath(key.value), !current, { ...file, size: bytes.length, blob }, cap.role);
    return {
      observation: {
        status: current ? 200 : 201,
        headers: { "content-type": "application/json", etag: `"${etag}"` },
        body: { size: request.content.length, etag, sha256 },
      },
    };
  }

  private remove(request: VaultRequest & { op: "delete" }): ModelAnswer {
    const access = this.authorize(request.cap, ["delete"], request.path, { fault: request.queryFault });
    if (!access.ok) return { observation: access.observation };
    const key = fileKey(access.value.cap, access.value.path);
    if (!key.ok) return { observation: key.observation };
    const gone = this.files.get(key.value);
    if (!gone) return { observation: this.isDir(key.value) ? error("conflict") : error("not_found") };
    this.supersede(key.value, gone);
    this.keepParentOf(key.value);
    this.files.delete(key.value);
    this.journal.remove(this.journalPath(key.value), contentOf(gone), access.value.cap.role);
    return { observation: empty(204) };
  }

  /** The folder a checked `childRoot` path names: its key without the `/`, or the refusal. */
  private folderKey(request: VaultRequest & { op: "mkdir" | "rmdir" }, right: Right): Outcome<string> {
    const access = this.authorize(request.cap, [right], request.path, { rootAllowed: true, fault: request.queryFault });
    if (!access.ok) return access;
    const { cap, path } = access.value;
    const rootKey = cap.levels.join("");
    // Checked as a new root would be: the prefix with its `/` stays under the key limit.
    if (path.text !== "" && utf8Length(`${rootKey}${path.text}/`) >= MAX_KEY_BYTES)
      return { ok: false, observation: error("invalid_path") };
    if (path.segments.length === 0) return { ok: false, observation: error("invalid_path") };
    return { ok: true, value: `${rootKey}${path.text}` };
  }

  private mkdir(request: VaultRequest & { op: "mkdir" }): ModelAnswer {
    const key = this.folderKey(request, "write");
    if (!key.ok) return { observation: key.observation };
    if (this.files.has(key.value) || this.someAncestorIsFile(key.value)) return { observation: error("conflict") };
    this.dirs.add(key.value);
    return { observation: empty(204) };
  }

  private rmdir(request: VaultRequest & { op: "rmdir" }): ModelAnswer {
    const key = this.folderKey(request, "delete");
    if (!key.ok) return { observation: key.observation };
    if (this.files.has(key.value)) return { observation: error("conflict") };
    if (!this.isDir(key.value)) return { observation: error("not_found") };
    const inside = `${key.value}/`;
    const holds =
      [...this.files.keys()].some((k) => k.startsWith(inside)) || [...this.dirs].some((d) => d.startsWith(inside));
    if (holds) return { observation: error("conflict") };
    this.dirs.delete(key.value);
    this.keepParentOf(key.value);
    return { observation: empty(204) };
  }

  /** A folder stays once a file or folder leaves it. */
  private keepParentOf(key: string): void {
    const slash = key.lastIndexOf("/");
    if (slash > 0) this.dirs.add(key.slice(0, slash));
  }

  private stat(request: VaultRequest & { op: "stat" }): ModelAnswer {
    const access = this.authorize(request.cap, ["read", "list"], request.path, {
      any: true,
      rootAllowed: true,
      fault: request.queryFault,
    });
    if (!access.ok) return { observation: access.observation };
    const { cap, path } = access.value;
    if (path.segments.length === 0) return { observation: json(200, { type: "dir" }) };
    const key = fileKey(cap, path);
    if (!key.ok) return { observation: key.observation };
    const file = this.files.get(key.value);
    if (file) {
      return {
        // The etag (an unkeyed content hash) only for a cap that may read.
        observation: json(200, {
          type: "file",
          size: file.bytes.length,
          ...etagFor(cap, file),
          modified: "<time>",
          contentType: file.contentType,
        }),
      };
    }
    return { observation: this.isDir(key.value) ? json(200, { type: "dir" }) : error("not_found") };
  }

  private list(request: VaultRequest & { op: "list" }): ModelAnswer {
    const access = this.authorize(request.cap, ["list"], request.path, {
      rootAllowed: true,
      fault: request.queryFault,
    });
    if (!access.ok) return { observation: access.observation };
    const { cap, path } = access.value;
    const limit = parseLimit(request.limit);
    if (limit === null) return { observation: error("bad_request") };
    const depth = request.depth === undefined || request.depth === "" ? 1 : Number(request.depth);
    if (!/^\d{0,3}$/.test(request.depth ?? "") || depth > 512) return { observation: error("bad_request") };
    const after = this.decodeCursor(request.cursor);
    if (after === undefined) return { observation: error("bad_request") };
    const rootKey = cap.levels.join("");
    const dirKey = path.text === "" ? rootKey : `${rootKey}${path.text}/`;
    if (utf8Length(dirKey) > MAX_KEY_BYTES) return { observation: error("invalid_path") };
    // A continued listing (cursor given) does not re-judge the folder: it is simply empty once gone.
    if (path.segments.length > 0 && after === null) {
      const self = dirKey.slice(0, -1);
      if (this.files.has(self)) return { observation: error("conflict") };
      if (!this.isDir(self)) return { observation: error("not_found") };
    }
    const atCapRoot = path.segments.length === 0;
    if (depth !== 1) return this.listTree(cap, dirKey, atCapRoot, { limit, after, depth });
    const byName = new Map<string, Json>();
    for (const [key, file] of this.files) {
      if (!key.startsWith(dirKey)) continue;
      const rest = key.slice(dirKey.length);
      const slash = rest.indexOf("/");
      const name = slash < 0 ? rest : rest.slice(0, slash);
      // A listing shows what this cap can name: at its root `~x` or `c:` would be an absolute path.
      if (atCapRoot && !namesItself(name)) continue;
      if (slash >= 0) byName.set(name, { name, type: "dir" });
      else if (!byName.has(name))
        byName.set(name, { name, type: "file", size: file.bytes.length, ...etagFor(cap, file), modified: "<time>" });
    }
    for (const dir of this.dirs) {
      if (!dir.startsWith(dirKey)) continue;
      const name = dir.slice(dirKey.length).split("/")[0]!;
      if (atCapRoot && !namesItself(name)) continue;
      byName.set(name, { name, type: "dir" });
    }
    const names = [...byName.keys()].filter((name) => after === null || compareUtf8(name, after) > 0).sort(compareUtf8);
    const page = names.slice(0, limit);
    const more = names.length > limit;
    const cursor = more ? MODEL_CURSOR + page[page.length - 1]! : null;
    return {
      observation: json(200, {
        entries: page.map((name) => byName.get(name)!),
        cursor: cursor === null ? null : "<cursor>",
      }),
      cursor,
    };
  }

  private move(request: VaultRequest & { op: "move" }): ModelAnswer {
    if (!this.live(request.cap)) return { observation: noSuchCap() };
    const body = parseJsonBody(request.body);
    if (!body.ok) return { observation: body.observation };
    const fields = body.value;
    if (typeof fields !== "object" || fields === null || Array.isArray(fields))
      return { observation: error("bad_request") };
    if (Object.keys(fields).some((k) => !["from", "to", "overwrite"].includes(k)))
      return { observation: error("bad_request") };
    const { from, to, overwrite = false } = fields as Record<string, unknown>;
    if (typeof from !== "string" || typeof to !== "string" || typeof overwrite !== "boolean")
      return { observation: error("bad_request") };

    const access = this.authorize(request.cap, ["write", "delete"], from, {});
    if (!access.ok) return { observation: access.observation };
    const { cap } = access.value;
    const toPath = parseFilePath(to);
    if (!toPath.ok) return { observation: toPath.observation };
    const src = fileKey(cap, access.value.path);
    if (!src.ok) return { observation: src.observation };
    const dst = fileKey(cap, toPath.value);
    if (!dst.ok) return { observation: dst.observation };

    const source = this.files.get(src.value);
    if (!source) return { observation: this.isDir(src.value) ? error("conflict") : error("not_found") };
    if (this.someAncestorIsFile(dst.value)) return { observation: error("conflict") };
    if (this.isDir(dst.value)) return { observation: error("conflict") };
    const replacedFile = this.files.get(dst.value);
    const replaced = replacedFile !== undefined;
    if (replaced && !overwrite) return { observation: error("conflict") };
    if (replacedFile && src.value !== dst.value) this.supersede(dst.value, replacedFile);
    this.keepParentOf(src.value);
    this.files.delete(src.value);
    this.files.set(dst.value, source);
    // A move onto itself changes nothing, so it records nothing.
    if (src.value !== dst.value)
      this.journal.move(
        this.journalPath(src.value),
        this.journalPath(dst.value),
        contentOf(source),
        replaced,
        cap.role,
      );
    return { observation: json(200, { from, to }) };
  }

  // ---- versions ----------------------------------------------------------

  /** A file's versions, newest first; a deleted file's too. The cursor is the id of the last one shown. */
  private versions(request: VaultRequest & { op: "versions" }): ModelAnswer {
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

  private readVersion(request: VaultRequest & { op: "readVersion" }): ModelAnswer {
    const found = this.findVersion(request.cap, "read", request.id);
    if (!found.ok) return { observation: found.observation };
    const { blob, contentType } = found.value;
    const headers = { "content-type": contentType, "content-length": String(blob.bytes.length) };
    return { observation: { status: 200, headers, body: { bytes: hex(blob.bytes) } } };
  }

  /** A restore is a write of the version's bytes to its path, through this cap, as the cap would write them. */
  private restore(request: VaultRequest & { op: "restore" }): ModelAnswer {
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
  private redact(request: VaultRequest & { op: "redact" }): ModelAnswer {
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
  private findVersion(pick: CapPick, right: Right, rawId: string, { redactedToo = false } = {}): Outcome<ModelVersion> {
    const cap = this.live(pick);
    if (!cap) return { ok: false, observation: noSuchCap() };
    if (!cap.rights.includes(right)) return { ok: false, observation: error("forbidden") };
    const row = this.journal.find(rawId, scopeOf(cap), cap.historyFrom);
    if (!row) return { ok: false, observation: error("not_found", {}, NO_SUCH_VERSION) };
    if (row.blob.redacted && !redactedToo) return { ok: false, observation: error("not_found") };
    return { ok: true, value: row };
  }

  /** How the root's journal names a file: its key below level 0, the admin's prefix. */
  private journalPath(key: string): string {
    return key.slice(this.caps[0]!.levels[0]!.length);
  }

  // ---- internals ---------------------------------------------------------

  /**
   * The order in which the contract refuses: a dead or unknown cap first,
   * whatever else is wrong with the request; then a malformed request; then
   * the right; then the path.
   */
  private authorize(
    pick: CapPick,
    needed: Right[],
    rawPath: string | null,
    options: { any?: boolean; rootAllowed?: boolean; fault?: QueryFault | undefined },
  ): Outcome<{ cap: ModelCap; path: RelPath }> {
    const cap = this.live(pick);
    if (!cap) return { ok: false, observation: noSuchCap() };
    if (options.fault === "undecodable_path") return { ok: false, observation: error("invalid_path") };
    if (options.fault === "repeated_path") return { ok: false, observation: error("bad_request") };
    const allowed = options.any
      ? needed.some((r) => cap.rights.includes(r))
      : needed.every((r) => cap.rights.includes(r));
    if (!allowed) return { ok: false, observation: error("forbidden") };
    const path = options.rootAllowed ? parsed(parseRelPath(rawPath)) : parseFilePath(rawPath);
    if (!path.ok) return path;
    return { ok: true, value: { cap, path: path.value } };
  }

  private live(pick: CapPick): ModelCap | null {
    if (!("role" in pick)) return null;
    const cap = this.caps[pick.role];
    return cap?.alive ? cap : null;
  }

  private killSubtree(cap: ModelCap): void {
    cap.alive = false;
    for (const role of cap.children) this.killSubtree(this.caps[role]!);
    cap.children = [];
  }

  private forgetChild(parent: ModelCap, role: number): void {
    parent.children = parent.children.filter((r) => r !== role);
  }

  /** A directory exists while a file lies beneath it, or a kept folder at or beneath it. */
  private isDir(key: string): boolean {
    const prefix = `${key}/`;
    for (const other of this.files.keys()) if (other.startsWith(prefix)) return true;
    for (const dir of this.dirs) if (dir === key || dir.startsWith(prefix)) return true;
    return false;
  }

  /** Whether any proper `/`-prefix of the key (its folders, from the very top) is a file. */
  private someAncestorIsFile(key: string): boolean {
    for (let i = key.indexOf("/"); i >= 0; i = key.indexOf("/", i + 1)) {
      if (this.files.has(key.slice(0, i))) return true;
    }
    return false;
  }

  /** The name a cursor continues after: `null` for none, `undefined` for an invalid cursor. */
  /**
   * Every file below `dirKey` by relative path in UTF-8 order; with `depth` N,
   * a file deeper than N shows as its folder at level N, once. The cursor is
   * the last file walked.
   */
  private listTree(
    cap: ModelCap,
    dirKey: string,
    atCapRoot: boolean,
    { limit, after, depth }: { limit: number; after: string | null; depth: number },
  ): ModelAnswer {
    const folderOf = (p: string) =>
      depth === 0 || p.split("/").length <= depth ? null : p.split("/").slice(0, depth).join("/");
    const paths = [...this.files.keys()]
      .filter((key) => key.startsWith(dirKey))
      .map((key) => key.slice(dirKey.length))
      .filter((p) => !atCapRoot || namesItself(p.split("/")[0]!))
      .filter((p) => after === null || compareUtf8(p, after) > 0)
      .sort(compareUtf8);
    const entries: Json[] = [];
    let lastFolder = after === null ? null : folderOf(after);
    let lastWalked = after;
    let more = false;
    for (const p of paths) {
      const folder = folderOf(p);
      const shown = folder === null || folder !== lastFolder;
      if (shown && entries.length === limit) {
        more = true;
        break;
      }
      lastWalked = p;
      const file = this.files.get(dirKey + p)!;
      if (folder === null)
        entries.push({ name: p, type: "file", size: file.bytes.length, ...etagFor(cap, file), modified: "<time>" });
      else if (shown) entries.push({ name: folder, type: "dir" });
      if (folder !== null) lastFolder = folder;
    }
    const cursor = more ? MODEL_CURSOR + lastWalked : null;
    return { observation: json(200, { entries, cursor: cursor === null ? null : "<cursor>" }), cursor };
  }

  private decodeCursor(raw: string | undefined): string | null | undefined {
    if (raw === undefined || raw === "") return null;
    // The model only ever hands out its own cursors; anything else a test sends is garbage.
    return raw.startsWith(MODEL_CURSOR) ? raw.slice(MODEL_CURSOR.length) : undefined;
  }
}

/** Whether a name, given alone, is a path naming exactly itself. */
function namesItself(name: string): boolean {
  const path = parseRelPath(name);
  return path.ok && path.value.segments.length === 1 && path.value.text === name;
}

function parseFilePath(raw: string | null): Outcome<RelPath> {
  const path = parsed(parseRelPath(raw));
  if (path.ok && path.value.segments.length === 0) return { ok: false, observation: error("invalid_path") };
  return path;
}

function parsed(result: ReturnType<typeof parseRelPath>): Outcome<RelPath> {
  if (result.ok) return { ok: true, value: result.value };
  // Parser refusals carry the parser's own message.
  return { ok: false, observation: error(result.error.code, undefined, result.error.message) };
}

/** A file's full key; over R2's 1,024 bytes (root included) it is `invalid_path` on every backend. */
function fileKey(cap: ModelCap, path: RelPath): Outcome<string> {
  const key = cap.levels.join("") + path.text;
  return utf8Length(key) > MAX_KEY_BYTES ? { ok: false, observation: error("invalid_path") } : { ok: true, value: key };
}

/** `limit`: absent or empty means the most; otherwise an integer from 1 to the most. */
function parseLimit(raw: string | undefined, most = MAX_LIST_LIMIT): number | null {
  if (raw === undefined || raw === "") return most;
  if (!/^\d+$/.test(raw)) return null;
  const limit = Number(raw);
  return limit >= 1 && limit <= most ? limit : null;
}

/** A cap's scope in its root's journal: its root below level 0. */
function scopeOf(cap: ModelCap): string {
  return cap.levels.slice(1).join("");
}

function contentOf(file: ModelFile) {
  return { size: file.bytes.length, sha256: file.sha256, contentType: file.contentType, blob: file.blob };
}

/** A version as `GET /versions` shows it: a redacted one keeps its size but loses its hash. */
function versionView(row: ModelVersion): Json {
  const { redacted } = row.blob;
  return {
    id: String(row.id),
    operation: row.op,
    at: "<time>",
    size: row.size,
    sha256: redacted ? null : row.sha256,
    actor: idOf(row.actor),
    redacted,
  };
}

/** A request's JSON body; an empty body counts as `{}`. */
function parseJsonBody(text: string): Outcome<unknown> {
  try {
    return { ok: true, value: JSON.parse(text === "" ? "{}" : text) as unknown };
  } catch {
    return { ok: false, observation: error("bad_request") };
  }
}

function idOf(role: number): string {
  return `<id:${role}>`;
}

function json(status: number, body: Json): Observation {
  return { status, headers: { "content-type": "application/json" }, body };
}

function empty(status: number): Observation {
  return { status, headers: {}, body: null };
}

/** The content hashes (unkeyed, so guess oracles) only for a cap that may read. */
function etagFor(cap: { rights: Right[] }, file: ModelFile): { etag?: string; sha256?: string } {
  return cap.rights.includes("read") ? { etag: file.etag, sha256: file.sha256 } : {};
}

function noSuchCap(): Observation {
  return error("no_such_cap");
}

function error(code: ErrorCode, headers: Record<string, string> = {}, message?: string): Observation {
  const fixed = message ?? (FIXED_MESSAGES.has(code) ? defaultMessage(code) : null);
  return {
    status: STATUS[code],
    headers: { "content-type": "application/json", ...headers },
    body: { error: { code, message: fixed } },
  };
}

export function md5Hex(bytes: Uint8Array): string {
  return createHash("md5").update(bytes).digest("hex");
}

export function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

/** The tightest limits of a quota chain. */
function effective(chain: ModelCap["quotas"]): { maxBytes: number | null; maxFiles: number | null } {
  const min = (values: (number | null)[]) => {
    const set = values.filter((v) => v !== null);
    return set.length === 0 ? null : Math.min(...set);
  };
  return { maxBytes: min(chain.map((r) => r.maxBytes)), maxFiles: min(chain.map((r) => r.maxFiles)) };
}
