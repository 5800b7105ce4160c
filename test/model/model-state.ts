/**
 * The reference model's state, and what every request shares: who may act,
 * which paths exist, how answers look. The requests build on it by subject:
 * caps-model.ts, then files-model.ts, then vault-model.ts (versions, `apply`).
 */
import { createHash } from "node:crypto";
import type { ErrorCode } from "../../shared/error-codes.ts";
import { defaultMessage, refusal } from "../../shared/refusals.ts";
import { MAX_KEY_BYTES, parseRelPath, type RelPath, utf8Length } from "../../shared/rel-path.ts";
import { DEFAULT_RETENTION } from "../../shared/retention.ts";
import { RIGHTS, type Right } from "../../shared/rights.ts";
import { compareUtf8 } from "../../shared/utf8-order.ts";
import { type ModelBlob, ModelJournal, type ModelVersion } from "./journal-model.ts";
import type { CapPick, Json, ModelAnswer, Observation, QueryFault } from "./model-requests.ts";

export const DEFAULT_CONTENT_TYPE = "application/octet-stream";
export const MAX_LIST_LIMIT = 1000;
export const MAX_VERSION_LIMIT = 100;

/** The contract's code → status table (worker/http-error.ts states it for the implementation). */
export const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  invalid_path: 400,
  absolute_path: 400,
  path_escapes: 400,
  unauthorized: 401,
  forbidden: 403,
  outside_root: 403,
  no_such_cap: 404,
  legacy_token: 410,
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
export const FIXED_MESSAGES = new Set<ErrorCode>(["no_such_cap", "path_escapes", "absolute_path", "outside_root"]);
/** The one answer for an id a cap may not name (README: unknown, malformed, foreign and out of scope alike). */
export const NO_SUCH_VERSION = refusal("noSuchVersion").message;

export interface ModelFile {
  bytes: Uint8Array;
  etag: string;
  sha256: string;
  contentType: string;
  /** The bytes its versions point at (a move carries them along, a delete points at them). */
  blob: ModelBlob;
}

export interface ModelCap {
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

export type Outcome<T> = { ok: true; value: T } | { ok: false; observation: Observation };

export const MODEL_CURSOR = "model-cursor:";

export abstract class ModelState {
  protected readonly files = new Map<string, ModelFile>();
  /** Kept folders by key (no trailing `/`): they exist while empty. */
  protected readonly dirs = new Set<string>();
  /**
   * Superseded content, by its bytes, with the key it was current at: quotas count it while a version still
   * points at it (not pruned) and it is not redacted, each set of bytes once, as the journal's ledger does.
   */
  protected readonly kept = new Map<ModelBlob, { key: string; size: number }>();
  protected readonly caps: ModelCap[] = [];
  protected readonly journal: ModelJournal;

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

  /** What a cap's subtree holds, as quotas count it: live bytes plus superseded bytes kept, and live files. */
  protected usage(prefix: string): { bytes: number; files: number } {
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

  protected supersede(key: string, file: ModelFile): void {
    this.kept.set(file.blob, { key, size: file.bytes.length });
  }

  /** A folder stays once a file or folder leaves it. */
  protected keepParentOf(key: string): void {
    const slash = key.lastIndexOf("/");
    if (slash > 0) this.dirs.add(key.slice(0, slash));
  }

  /** How the root's journal names a file: its key below level 0, the admin's prefix. */
  protected journalPath(key: string): string {
    return key.slice(this.caps[0]!.levels[0]!.length);
  }

  // ---- internals ---------------------------------------------------------

  /**
   * The order in which the contract refuses: a dead or unknown cap first,
   * whatever else is wrong with the request; then a malformed request; then
   * the right; then the path.
   */
  protected authorize(
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

  protected live(pick: CapPick): ModelCap | null {
    if (!("role" in pick)) return null;
    const cap = this.caps[pick.role];
    return cap?.alive ? cap : null;
  }

  protected killSubtree(cap: ModelCap): void {
    cap.alive = false;
    for (const role of cap.children) this.killSubtree(this.caps[role]!);
    cap.children = [];
  }

  protected forgetChild(parent: ModelCap, role: number): void {
    parent.children = parent.children.filter((r) => r !== role);
  }

  /** A directory exists while a file lies beneath it, or a kept folder at or beneath it. */
  protected isDir(key: string): boolean {
    const prefix = `${key}/`;
    for (const other of this.files.keys()) if (other.startsWith(prefix)) return true;
    for (const dir of this.dirs) if (dir === key || dir.startsWith(prefix)) return true;
    return false;
  }

  /** Whether any proper `/`-prefix of the key (its folders, from the very top) is a file. */
  protected someAncestorIsFile(key: string): boolean {
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
  protected listTree(
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

  protected decodeCursor(raw: string | undefined): string | null | undefined {
    if (raw === undefined || raw === "") return null;
    // The model only ever hands out its own cursors; anything else a test sends is garbage.
    return raw.startsWith(MODEL_CURSOR) ? raw.slice(MODEL_CURSOR.length) : undefined;
  }
}

/** Whether a name, given alone, is a path naming exactly itself. */
export function namesItself(name: string): boolean {
  const path = parseRelPath(name);
  return path.ok && path.value.segments.length === 1 && path.value.text === name;
}

export function parseFilePath(raw: string | null): Outcome<RelPath> {
  const path = parsed(parseRelPath(raw));
  if (path.ok && path.value.segments.length === 0) return { ok: false, observation: error("invalid_path") };
  return path;
}

export function parsed(result: ReturnType<typeof parseRelPath>): Outcome<RelPath> {
  if (result.ok) return { ok: true, value: result.value };
  // Parser refusals carry the parser's own message.
  return { ok: false, observation: error(result.error.code, undefined, result.error.message) };
}

/** A file's full key; over R2's 1,024 bytes (root included) it is `invalid_path` on every backend. */
export function fileKey(cap: ModelCap, path: RelPath): Outcome<string> {
  const key = cap.levels.join("") + path.text;
  return utf8Length(key) > MAX_KEY_BYTES ? { ok: false, observation: error("invalid_path") } : { ok: true, value: key };
}

/** `limit`: absent or empty means the most; otherwise an integer from 1 to the most. */
export function parseLimit(raw: string | undefined, most = MAX_LIST_LIMIT): number | null {
  if (raw === undefined || raw === "") return most;
  if (!/^\d+$/.test(raw)) return null;
  const limit = Number(raw);
  return limit >= 1 && limit <= most ? limit : null;
}

/** A cap's scope in its root's journal: its root below level 0. */
export function scopeOf(cap: ModelCap): string {
  return cap.levels.slice(1).join("");
}

export function contentOf(file: ModelFile) {
  return { size: file.bytes.length, sha256: file.sha256, contentType: file.contentType, blob: file.blob };
}

/** A version as `GET /versions` shows it: a redacted one keeps its size but loses its hash. */
export function versionView(row: ModelVersion): Json {
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
export function parseJsonBody(text: string): Outcome<unknown> {
  try {
    return { ok: true, value: JSON.parse(text === "" ? "{}" : text) as unknown };
  } catch {
    return { ok: false, observation: error("bad_request") };
  }
}

export function idOf(role: number): string {
  return `<id:${role}>`;
}

export function json(status: number, body: Json): Observation {
  return { status, headers: { "content-type": "application/json" }, body };
}

export function empty(status: number): Observation {
  return { status, headers: {}, body: null };
}

/** The content hashes (unkeyed, so guess oracles) only for a cap that may read. */
export function etagFor(cap: { rights: Right[] }, file: ModelFile): { etag?: string; sha256?: string } {
  return cap.rights.includes("read") ? { etag: file.etag, sha256: file.sha256 } : {};
}

export function noSuchCap(): Observation {
  return error("no_such_cap");
}

export function error(code: ErrorCode, headers: Record<string, string> = {}, message?: string): Observation {
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
export function effective(chain: ModelCap["quotas"]): { maxBytes: number | null; maxFiles: number | null } {
  const min = (values: (number | null)[]) => {
    const set = values.filter((v) => v !== null);
    return set.length === 0 ? null : Math.min(...set);
  };
  return { maxBytes: min(chain.map((r) => r.maxBytes)), maxFiles: min(chain.map((r) => r.maxFiles)) };
}
