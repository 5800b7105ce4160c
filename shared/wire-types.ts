/**
 * The JSON shapes of the HTTP contract, written once: the worker answers
 * with them, the Durable Objects return them over RPC, and the SDK hands them
 * to callers. Internal shapes (stored records, storage pages) have their own
 * names where they live; the SDK's public aliases are in clients/typescript/index.ts.
 */
import type { ErrorCode } from "./error-codes.ts";
import type { Limits, Usage } from "./quota.ts";
import type { Right } from "./rights.ts";

export type Backend = "r2" | "disk";

/** `GET /object/<token>`: what a cap is. Never includes its root or backend. */
export interface CapInfo {
  /** Public fingerprint of the token: safe to show and log. */
  id: string;
  rights: Right[];
  label: string | null;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601, or `null` when the cap never expires. */
  expiresAt: string | null;
  /** The id of the cap this one was minted from, or `null` for a root cap. */
  parent: string | null;
  /** The tightest quota of the cap's chain (shared/quota.ts); `null` where unlimited. */
  limits: Limits;
  /**
   * What the cap's subtree holds: live bytes plus superseded versions still
   * kept, and live files. Only `GET /object/<token>` (and the RPC `info()`)
   * include it; `null` when the vault keeps no journal.
   */
  usage?: Usage | null;
  /** A holder-bound cap's key thumbprint (RFC 7638); `null` for a bearer cap (issue 20). */
  holder?: { jkt: string } | null;
}

/** The answer of `POST /subdir` and `POST /admin/roots`. `token` and `url` are the secret. */
export interface MintedCap {
  token: string;
  url: string;
  id: string;
  rights: Right[];
  expiresAt: string | null;
}

export interface FileStat {
  type: "file";
  size: number;
  /** Hex MD5, unquoted. Absent for a cap without `read`: an unkeyed content hash lets a holder test guesses. */
  etag?: string;
  /**
   * Hex SHA-256 of the bytes, computed as they were written; only with `read`,
   * like the etag. `null` for an R2 file stored before hashes were kept.
   */
  sha256?: string | null;
  /** ISO 8601. */
  modified: string;
  contentType: string;
}

export interface DirStat {
  type: "dir";
}

export type Stat = FileStat | DirStat;

/** One entry of `GET /list`; files carry size, modified and, for a cap with `read`, etag and sha256. */
export interface ListEntry {
  /** A direct child's name; with `depth` other than 1, the path relative to the listed folder (`a/b.txt`). */
  name: string;
  type: "file" | "dir";
  size?: number;
  etag?: string;
  /** As in {@link FileStat}. */
  sha256?: string | null;
  modified?: string;
}

/** `GET /list`: direct children (or, with `depth`, files below) sorted by UTF-8 bytes. */
export interface ListPage {
  entries: ListEntry[];
  /** Pass back as `cursor` for the next page; `null` on the last page. */
  cursor: string | null;
}

/**
 * What `PUT /file` did. The JSON body carries `size` and `etag`; `created`
 * travels as the status (201 created, 200 replaced).
 */
export interface WriteResult {
  /** `true` when the file did not exist before (HTTP 201), `false` when it was replaced (HTTP 200). */
  created: boolean;
  size: number;
  /** Hex MD5, unquoted. */
  etag: string;
  /** Hex SHA-256 of the bytes written. */
  sha256: string;
}

/** What happened to a path in one version: a write made or replaced it, a delete or a move took it away. */
export type VersionOperation = "created" | "modified" | "deleted" | "moved";

/** One version of a file (`GET /versions`). Never a path outside the cap, never a token. */
export interface Version {
  /** Decimal, increasing across the whole root: later versions have larger ids. */
  id: string;
  operation: VersionOperation;
  /** ISO 8601. */
  at: string;
  /** The bytes this version holds (for `deleted` and `moved`, the bytes that were taken away); `null` when unknown. */
  size: number | null;
  sha256: string | null;
  /** The public id of the cap that did it: opaque, it names no path and grants nothing. */
  actor: string;
  /** True when this version has no bytes to read or restore: redacted, or never kept. */
  redacted: boolean;
}

/** `GET /versions?path=P`: a file's versions, newest first. */
export interface VersionPage {
  versions: Version[];
  /** Pass back as `cursor` for the next (older) page; `null` on the last page. */
  cursor: string | null;
}

/** One change as `GET /watch` streams it (an event's `data`), inside the watching cap's subtree. */
export interface WatchEvent {
  /** Relative to the watching cap's root. */
  path: string;
  operation: VersionOperation;
  size: number | null;
  sha256: string | null;
  /** The public id of the cap that made the change. */
  actor: string;
  /** The version this change recorded: pass it as `since` to resume after it. */
  version: string;
}

/** What a Cap'n Web `watch` callback receives: a change, or once, the end of the feed and where to resume. */
export type RpcWatchMessage = ({ type: "change" } & WatchEvent) | { type: "end"; since: string | null };

/** `POST /move`: the paths as the request gave them; for a folder, what was moved. */
export interface MoveResult {
  from: string;
  to: string;
  moved?: FolderCount;
}

/** Files and folders a whole-folder operation deleted or moved. */
export interface FolderCount {
  files: number;
  folders: number;
}

/** `DELETE /folder?recursive=true`. */
export interface FolderDeleted {
  deleted: FolderCount;
}

/** `GET /lines`: one window of a text file's lines. */
export interface LinesPage {
  /** Lines `offset` onward, each without its `\n` (a `\r` before it stays). */
  lines: string[];
  /** The 1-based number of the first line returned. */
  offset: number;
  /** Lines in the whole file; a last line without `\n` counts, an empty file has none. */
  totalLines: number;
  /** The offset to read next, or `null` when the window reached the end of the file. */
  nextOffset: number | null;
  /** The file's size in bytes. */
  size: number;
}

/** A child as its parent sees it (`GET /children`). */
export interface ChildView {
  id: string;
  label: string | null;
  /** Relative to the parent cap. */
  path: string;
  rights: Right[];
  createdAt: string;
  expiresAt: string | null;
}

/** `GET /children`: live children in creation order. */
export interface ChildPage {
  children: ChildView[];
  /** Pass back as `cursor` for the next page; `null` on the last page. */
  cursor: string | null;
}

/** One cap in `GET /tree`: a descendant, by id only (never a token or a key). */
export interface CapTreeNode extends ChildView {
  /** Its own live children, as far as the walk's bounds reached (see {@link CapTree.truncated}). */
  children: CapTreeNode[];
}

/** `GET /tree`: the live caps derived from this one, breadth first within fixed depth and node bounds. */
export interface CapTree {
  id: string;
  children: CapTreeNode[];
  /** True when the bounds cut the walk: the tree may hold more caps than shown. */
  truncated: boolean;
}

/** One line of a cap's audit (`GET /audit`): what was asked through this cap and how it ended. Never a token. */
export interface AuditEntry {
  /** ISO 8601: the latest occurrence. */
  at: string;
  op: string;
  /** The path as the client sent it (cut to 256 characters), so refused attempts stay visible. */
  path: string | null;
  /** `ok`, or the wire error code. */
  outcome: string;
  /** The public id of a child this operation minted or revoked. */
  child: string | null;
  /** How many identical refusals this line stands for; 1 for everything else. */
  count: number;
}

/** `GET /audit`: newest first. */
export interface AuditTrail {
  entries: AuditEntry[];
}

/** A root cap as the admin sees it (`GET /admin/roots`): unlike caps, this shows backend and prefix. */
export interface RootView {
  id: string;
  label: string | null;
  backend: Backend;
  prefix: string;
  rights: Right[];
  createdAt: string;
  expiresAt: string | null;
}

/**
 * A format-0 cap `POST /admin/reissue-legacy` re-issued (docs/upgrading.md): its old public id, and the
 * new cap over the same root, rights, label, expiry and place in the tree (`parent`: the new id of its parent).
 */
export interface ReissuedCap {
  oldId: string;
  id: string;
  url: string;
  label: string | null;
  parent: string | null;
  depth: number;
}

/** One step of `POST /admin/reissue-legacy`: the caps it re-issued (repeated until acknowledged), and whether all are. */
export interface ReissueStep {
  reissued: ReissuedCap[];
  done: boolean;
}

/** One page of `GET /admin/roots`: live roots in id order; `cursor` is null on the last page. */
export interface RootList {
  roots: RootView[];
  cursor: string | null;
}

/** The 202 answer of a revocation whose cascade is still being finished by alarms (204 has no body). */
export interface RevokePending {
  revoked: true;
  /** Descendants not yet reached. */
  pendingDescendants: number;
}

/** Every refusal's body, whatever the route: the same bytes for a revoked, expired, forged or unknown token. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/** `GET /search`: what `mode` asks for. */
export type SearchMode = "lines" | "count" | "files";

/** One line of a `lines` answer: a matching line, or (`match: false`) a context line around one. */
export interface SearchLine {
  /** Relative to the cap's root. */
  path: string;
  /** 1-based. */
  line: number;
  /** The line without its end of line, cut to its first 500 characters (then `cut` is true). */
  text: string;
  match: boolean;
  cut?: true;
}

/** A file the search left unread: over the size bound, binary (a NUL or invalid UTF-8), or a line over the bound. */
export interface SearchSkip {
  path: string;
  reason: "too_large" | "binary" | "long_line";
}

/**
 * `GET /search`: one page. Exactly one of `matches` (mode lines), `counts`
 * (count) or `files` (files) is present; `cursor` continues the search
 * (`null` once every file below the path has been searched).
 */
export interface SearchPage {
  matches?: SearchLine[];
  counts?: { path: string; count: number }[];
  files?: string[];
  skipped: SearchSkip[];
  /** The files read and their bytes, this page. */
  scanned: { files: number; bytes: number };
  cursor: string | null;
}
