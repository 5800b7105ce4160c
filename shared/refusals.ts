import type { ErrorCode } from "./error-codes.ts";
import type { CapFailure, Result } from "./result.ts";
import type { Right } from "./rights.ts";

/**
 * A name the client itself sent (a JSON field, a query parameter), echoed
 * back cut to 40 characters. Only {@link echoedName} makes one, so a message
 * parameter is never a plain string: no root prefix or host path can slip in.
 */
export type EchoedName = string & { readonly __echoedName: unique symbol };

export function echoedName(raw: string): EchoedName {
  return raw.slice(0, 40) as EchoedName;
}

/** What a message may be built from: numbers, rights, fixed words and names the client sent. */
type SafeValue = number | boolean | readonly Right[] | EchoedName | "r2" | "disk" | "path" | "prefix";

/** One refusal: its wire code and its text, fixed or built from typed parameters. */
export interface RefusalEntry {
  code: ErrorCode;
  message: string | ((params: never) => string);
}

type MessageArgs<E extends RefusalEntry> = E["message"] extends string
  ? []
  : E["message"] extends (params: infer P) => string
    ? [params: P]
    : never;

/**
 * The lookup for a table of refusals: a reason (and its parameters) in, the
 * wire refusal out. The tools with texts of their own (memory tool, MCP) keep
 * their own table and build it with this too.
 */
export function refusalsFrom<T extends Record<string, RefusalEntry>>(table: T) {
  return <R extends keyof T & string>(reason: R, ...params: MessageArgs<T[R]>): CapFailure => {
    const entry = table[reason] as RefusalEntry;
    const { message } = entry;
    return {
      code: entry.code,
      message: typeof message === "string" ? message : (message as (p: unknown) => string)(params[0]),
    };
  };
}

/**
 * Every refusal capvault gives, once: its wire code and its exact text. The
 * backends are compared byte for byte (R2 vs disk), so one refusal has one
 * text, and a text is fixed or built only from {@link SafeValue}s, so it can
 * never echo a root prefix or a host path.
 */
export const REFUSALS = {
  // -- a code's own text, for refusals that name only a code
  badRequest: { code: "bad_request", message: "bad request" },
  lacksRight: { code: "forbidden", message: "capability lacks the right for this operation" },
  bodyLimit: { code: "too_large", message: "body too large" },
  quotaExceeded: { code: "quota_exceeded", message: "a quota of this cap is used up; nothing was written" },
  // -- the path parser
  invalidPath: { code: "invalid_path", message: "invalid path" },
  absolutePath: { code: "absolute_path", message: "absolute paths forbidden" },
  pathEscapes: { code: "path_escapes", message: "path escapes" },
  backslash: { code: "invalid_path", message: "backslashes are not allowed in paths" },
  controlCharacter: { code: "invalid_path", message: "control characters are not allowed in paths" },
  unpairedSurrogate: { code: "invalid_path", message: "unpaired surrogates are not allowed in paths" },
  emptySegment: { code: "invalid_path", message: "empty and '.' segments are not allowed" },
  segmentTooLong: { code: "invalid_path", message: "a path segment is over 255 bytes" },
  reservedName: { code: "invalid_path", message: "names starting with .capvault- are reserved" },
  pathTooLong: { code: "invalid_path", message: "path too long" },
  prefixTooLong: { code: "invalid_path", message: "prefix too long" },
  needsFileName: { code: "invalid_path", message: "a file operation needs a file name" },
  outsideRoot: { code: "outside_root", message: "resolved outside root" },
  // -- what storage holds
  notFound: { code: "not_found", message: "nothing at that path" },
  isDirectory: { code: "conflict", message: "that path is a directory" },
  isFile: { code: "conflict", message: "that path is a file" },
  parentIsFile: { code: "conflict", message: "a parent of that path is a file" },
  folderNotEmpty: { code: "conflict", message: "that folder is not empty" },
  needsFolderName: { code: "invalid_path", message: "a folder operation needs a folder name" },
  fileDirectoryClash: { code: "conflict", message: "a file is where a directory is needed, or the reverse" },
  cannotMoveDirectory: { code: "conflict", message: "cannot move a directory" },
  destinationParentIsFile: { code: "conflict", message: "a parent of the destination is a file" },
  destinationIsDirectory: { code: "conflict", message: "the destination is a directory" },
  destinationExists: { code: "conflict", message: "the destination exists" },
  // -- whole folders (worker/folder-ops.ts): refused before anything changes
  folderTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) =>
      `a folder deleted or moved in one request holds at most ${p.limit} entries; nothing was changed (do its subfolders first)`,
  },
  recursiveFlag: { code: "bad_request", message: 'recursive must be "true" or "false"' },
  folderIntoItself: { code: "conflict", message: "a folder cannot be moved into itself; nothing was changed" },
  folderOntoAncestor: {
    code: "conflict",
    message: "the destination holds the source folder; nothing was changed",
  },
  // -- line-ranged reads (worker/line-read.ts)
  linesRange: {
    code: "bad_request",
    message: (p: { max: number }) => `offset must be an integer from 1, limit an integer from 1 to ${p.max}`,
  },
  notText: { code: "conflict", message: "that file is not UTF-8 text" },
  lineTooLong: {
    code: "too_large",
    message: (p: { limit: number }) => `that line is over ${p.limit} bytes; read bytes with Range`,
  },
  linesFileTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) => `line reads take files of at most ${p.limit} bytes; read bytes with Range`,
  },
  keptChanging: { code: "conflict", message: "the file kept changing while it was read" },
  preconditionFailed: { code: "precondition_failed", message: "precondition failed" },
  malformedSha256: { code: "bad_request", message: 'a "sha256:" condition needs 64 hex digits' },
  rangeNotSatisfiable: { code: "range_not_satisfiable", message: "range not satisfiable" },
  // -- uploads
  lengthRequired: { code: "length_required", message: "a body of known length is required" },
  contentTypeInvalid: {
    code: "bad_request",
    message: (p: { max: number }) =>
      `Content-Type must be at most ${p.max} bytes of visible ASCII, with spaces or tabs only between them; nothing was written`,
  },
  lengthMismatch: { code: "bad_request", message: "the body did not match its Content-Length" },
  tooSlow: { code: "bad_request", message: "the body arrived too slowly; nothing was written" },
  tooManyUploads: {
    code: "unavailable",
    message: "too many uploads in progress; nothing was written, try again later",
  },
  tooLarge: { code: "too_large", message: (p: { limit: number }) => `files are limited to ${p.limit} bytes` },
  bodyTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) => `the request body is limited to ${p.limit} bytes`,
  },
  // -- storage failing
  unavailable: { code: "unavailable", message: "storage temporarily unavailable" },
  storageFailed: { code: "unavailable", message: "storage failed; nothing was written" },
  copyFailed: { code: "unavailable", message: "the copy failed; the source is untouched" },
  otherFilesystem: {
    code: "unavailable",
    message: "the destination is on another filesystem; the source is untouched",
  },
  backendMissing: { code: "unavailable", message: "this cap's storage backend is not configured here" },
  noTokenKey: { code: "unavailable", message: "this vault has no token key configured" },
  noPublicUrl: {
    code: "unavailable",
    message: "this vault has no public URL configured (CAPVAULT_PUBLIC_URL), so it hands out no cap URLs",
  },
  // -- caps and rights
  noSuchCap: { code: "no_such_cap", message: "no such capability" },
  capExists: { code: "conflict", message: "cap already exists" },
  needsRights: {
    code: "forbidden",
    message: (p: { rights: readonly Right[]; any: boolean }) =>
      `this operation needs the ${p.rights.join(p.any ? " or " : " and ")} right`,
  },
  etagNeedsRead: { code: "forbidden", message: "a condition on an etag needs the read right" },
  rightsNotHeld: { code: "forbidden", message: "a child cannot hold rights its parent lacks" },
  delegationTooDeep: {
    code: "too_large",
    message: (p: { limit: number }) => `caps are delegated at most ${p.limit} levels below their root`,
  },
  listChildrenNeedsSubdir: { code: "forbidden", message: "listing children needs the subdir right" },
  revokeChildNeedsSubdir: { code: "forbidden", message: "revoking children needs the subdir right" },
  treeNeedsSubdir: { code: "forbidden", message: "the delegation tree needs the subdir right" },
  tooManyChildren: {
    code: "conflict",
    message: (p: { limit: number }) => `a cap holds at most ${p.limit} live children; revoke some first`,
  },
  noSuchChild: { code: "not_found", message: "no such child" },
  // -- holder-bound caps (shared/holder-key.ts, shared/holder-proof.ts)
  holderInvalid: {
    code: "bad_request",
    message: 'holder must be a public JWK: {"kty":"OKP","crv":"Ed25519","x"} or {"kty":"EC","crv":"P-256","x","y"}',
  },
  holderRequired: { code: "forbidden", message: "a child of a holder-bound cap must be bound to a holder too" },
  invalidDpopProof: {
    code: "unauthorized",
    message: "the DPoP proof is stale, replayed, or made for another method, URL or body",
  },
  tooManyProofs: { code: "unavailable", message: "too many DPoP proofs in the replay window; try again later" },
  // -- versions: an id outside the cap's subtree, of another root, or malformed reads as unknown
  noSuchVersion: { code: "not_found", message: "no such version" },
  sinceInvalid: { code: "bad_request", message: "since must be a version id" },
  versionRedacted: { code: "not_found", message: "that version's bytes are gone (redacted, or never kept)" },
  redactBeforeFloor: {
    code: "forbidden",
    message:
      "these bytes are also held by history from before this cap was minted; a cap that sees it must redact them",
  },
  historyInvalid: { code: "bad_request", message: 'history must be "all" or absent' },
  keepVersionsRange: {
    code: "bad_request",
    message: (p: { max: number }) => `keepVersions must be an integer from 1 to ${p.max}`,
  },
  keepDaysRange: {
    code: "bad_request",
    message: (p: { max: number }) => `keepDays must be an integer from 1 to ${p.max}`,
  },
  // -- quotas (shared/quota.ts): a write refused for one stored nothing
  maxBytesRange: {
    code: "bad_request",
    message: (p: { max: number }) => `maxBytes must be an integer from 0 to ${p.max}, or null`,
  },
  maxFilesRange: {
    code: "bad_request",
    message: (p: { max: number }) => `maxFiles must be an integer from 0 to ${p.max}, or null`,
  },
  quotaLooser: { code: "bad_request", message: "a child's maxBytes and maxFiles cannot be looser than its parent's" },
  quotaBytes: {
    code: "quota_exceeded",
    message: (p: { limit: number }) =>
      `this cap's quota allows ${p.limit} bytes, kept versions included; nothing was written`,
  },
  quotaFiles: {
    code: "quota_exceeded",
    message: (p: { limit: number }) => `this cap's quota allows ${p.limit} files; nothing was written`,
  },
  adminTokenRequired: { code: "unauthorized", message: "admin token required" },
  noSuchRoot: { code: "not_found", message: "no such root" },
  backendChoice: { code: "bad_request", message: 'backend must be "r2" or "disk"' },
  backendNotDeployed: {
    code: "bad_request",
    message: (p: { backend: "r2" | "disk" }) => `the ${p.backend} backend is not configured on this deployment`,
  },
  // -- request shape
  foreignOrigin: {
    code: "forbidden",
    message: "requests from this Origin are refused: only the vault's own origin and loopback origins may use MCP",
  },
  noSuchRoute: { code: "not_found", message: "no such route" },
  malformedJson: { code: "bad_request", message: "malformed JSON" },
  expectedObject: { code: "bad_request", message: "expected a JSON object" },
  expectedMemoryInput: { code: "bad_request", message: "expected a JSON object: the memory tool's input" },
  unknownField: { code: "bad_request", message: (p: { field: EchoedName }) => `unknown field "${p.field}"` },
  notAString: { code: "bad_request", message: (p: { field: "path" | "prefix" }) => `${p.field} must be a string` },
  moveFields: { code: "bad_request", message: "from and to must be strings, overwrite a boolean" },
  ttlRange: {
    code: "bad_request",
    message: (p: { max: number }) => `ttlSeconds must be an integer from 1 to ${p.max}`,
  },
  labelInvalid: {
    code: "bad_request",
    message: (p: { max: number }) => `label must be a string of at most ${p.max} printable characters`,
  },
  rightsNotArray: { code: "bad_request", message: "rights must be an array of strings" },
  unknownRight: {
    code: "bad_request",
    message: (p: { known: readonly Right[] }) => `unknown right; rights are ${p.known.join(", ")}`,
  },
  rightsRepeat: { code: "bad_request", message: "rights must not repeat" },
  invalidCursor: { code: "bad_request", message: "invalid cursor" },
  depthRange: {
    code: "bad_request",
    message: (p: { max: number }) => `depth must be an integer from 0 (every file below) to ${p.max}`,
  },
  limitRange: { code: "bad_request", message: (p: { max: number }) => `limit must be an integer from 1 to ${p.max}` },
  // -- content search (GET /search, worker/content-search.ts)
  searchPatternMissing: { code: "bad_request", message: "pattern is required: a regular expression" },
  searchPatternTooLong: {
    code: "bad_request",
    message: (p: { max: number }) => `a search pattern holds at most ${p.max} characters`,
  },
  searchPatternSyntax: {
    code: "bad_request",
    message: "pattern is not a regular expression this vault accepts: RE2 syntax, without backreferences or lookaround",
  },
  searchPatternTooComplex: {
    code: "bad_request",
    message: (p: { max: number }) => `the pattern compiles to more than ${p.max} instructions; use a simpler one`,
  },
  searchMode: { code: "bad_request", message: "mode must be lines, count or files" },
  searchContext: {
    code: "bad_request",
    message: (p: { max: number }) => `context must be an integer from 0 to ${p.max}`,
  },
  searchIgnoreCase: { code: "bad_request", message: "ignoreCase must be true or false" },
  // The same bad encoding is an invalid path in `path`, a bad request elsewhere.
  badPathEncoding: { code: "invalid_path", message: "invalid percent-encoding in the query" },
  badQueryEncoding: { code: "bad_request", message: "invalid percent-encoding in the query" },
  repeatedQuery: {
    code: "bad_request",
    message: (p: { name: EchoedName }) => `the query parameter "${p.name}" is given more than once`,
  },
  malformedDiskCall: { code: "bad_request", message: "malformed disk call" },
  // -- Cap'n Web RPC (worker/rpc/)
  rpcMalformed: { code: "bad_request", message: "malformed RPC message" },
  rpcUnresolvedPromise: {
    code: "bad_request",
    message: "an RPC batch passes a promise of its own that it never resolves; nothing was run",
  },
  rpcFlooded: { code: "unavailable", message: "this RPC session kept calling past its rate, so it was closed" },
  rpcBatchStuck: { code: "bad_request", message: "the RPC batch waited on a value its client never sent" },
  rpcNeedsUpgrade: { code: "bad_request", message: "RPC takes a POST batch or a WebSocket upgrade" },
  rpcTooManyMessages: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch holds at most ${p.limit} messages`,
  },
  rpcTooDeep: {
    code: "bad_request",
    message: (p: { limit: number }) => `RPC messages nest at most ${p.limit} levels deep`,
  },
  rpcTooManyCalls: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch makes at most ${p.limit} calls`,
  },
  rpcTooManyMints: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch mints at most ${p.limit} caps`,
  },
  rpcPipelineTooDeep: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch chains at most ${p.limit} calls on earlier answers`,
  },
  rpcCallRate: {
    code: "unavailable",
    message: (p: { perSecond: number }) =>
      `an RPC session makes at most ${p.perSecond} calls a second; try again later`,
  },
  rpcMintRate: {
    code: "unavailable",
    message: (p: { perSecond: number }) => `an RPC session mints at most ${p.perSecond} caps a second; try again later`,
  },
  rpcCallsWaiting: { code: "unavailable", message: "too many RPC calls waiting; try again later" },
  rpcBytesWaiting: { code: "unavailable", message: "too many bytes of RPC writes held at once; try again later" },
  rpcReadTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) => `reads over RPC are limited to ${p.limit} bytes; GET /file has no limit`,
  },
  rpcReadBudget: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC batch reads at most ${p.limit} bytes in all`,
  },
  rpcWatchNeedsLive: {
    code: "bad_request",
    message: "watch needs a WebSocket session (connectLive); a batch ends with its answer",
  },
  rpcTooManyWatches: {
    code: "too_large",
    message: (p: { limit: number }) => `an RPC session watches at most ${p.limit} feeds at once`,
  },
  rpcNotACall: { code: "bad_request", message: "no such method on the cap, or a malformed RPC message" },
  rpcBytes: { code: "bad_request", message: "bytes must be a Uint8Array, an ArrayBuffer or a string" },
  rpcOptions: { code: "bad_request", message: "options must be an object" },
  // -- WebDAV (worker/dav/): the DAV layer gives some of these a status of WebDAV's own (423, 405, 415)
  davBasicRequired: {
    code: "unauthorized",
    message: "WebDAV at /dav/ takes a cap token as the password of HTTP Basic (any user name)",
  },
  davMethod: { code: "bad_request", message: "that method is not served on WebDAV here" },
  davDepth: { code: "bad_request", message: 'Depth must be "0", "1" or "infinity", as the method allows' },
  davDepthInfinity: { code: "forbidden", message: "PROPFIND with Depth infinity is refused; ask Depth 0 or 1" },
  davXml: {
    code: "bad_request",
    message: (p: { limit: number; depth: number }) =>
      `the XML body must be well formed, without DOCTYPE or entities, at most ${p.limit} bytes and ${p.depth} levels deep`,
  },
  davDestination: { code: "bad_request", message: "Destination must be an http(s) URL or absolute path" },
  davDestinationOutside: {
    code: "forbidden",
    message: "Destination must name a path inside the same cap, on this vault",
  },
  davSameResource: { code: "forbidden", message: "the source and the destination are the same resource" },
  davDestinationHoldsSource: {
    code: "forbidden",
    message: "the destination holds the source: overwriting it would delete what is copied or moved",
  },
  davOverwrite: { code: "bad_request", message: 'Overwrite must be "T" or "F"' },
  davTreeTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) =>
      `WebDAV deletes, copies and moves folders of at most ${p.limit} entries; use the HTTP API for bigger trees`,
  },
  davNoParent: { code: "conflict", message: "the folder that would hold it does not exist" },
  davExists: { code: "conflict", message: "something already exists at that path" },
  davMkcolBody: { code: "bad_request", message: "MKCOL takes no body" },
  davLocked: { code: "conflict", message: "that resource is locked; send its lock token in an If header" },
  davTooManyLocks: {
    code: "too_large",
    message: (p: { limit: number }) => `a cap holds at most ${p.limit} WebDAV locks at once`,
  },
  davNoSuchLock: { code: "conflict", message: "no such lock on this resource" },
  davLockOwner: {
    code: "too_large",
    message: (p: { limit: number }) => `a lock's owner is limited to ${p.limit} bytes`,
  },
  davProtectedProperty: {
    code: "forbidden",
    message: "live properties cannot be set or removed; nothing was changed",
  },
  davPropsFull: {
    code: "too_large",
    message: (p: { resources: number; bytes: number }) =>
      `a cap keeps WebDAV dead properties on at most ${p.resources} resources and ${p.bytes} bytes in all; nothing was changed`,
  },
  davPropsBound: {
    code: "too_large",
    message: (p: { props: number; value: number }) =>
      `a resource keeps at most ${p.props} dead properties, each value at most ${p.value} bytes; nothing was changed`,
  },
} as const satisfies Record<string, RefusalEntry>;

export type Reason = keyof typeof REFUSALS;
type MessageOf<R extends Reason> = (typeof REFUSALS)[R]["message"];
/** The parameters a reason's message is built from; none for a fixed text. */
export type ParamsOf<R extends Reason> = MessageOf<R> extends (params: infer P) => string ? P : never;
/** Reasons whose text carries a value. */
export type ParamReason = { [R in Reason]: MessageOf<R> extends string ? never : R }[Reason];

// Compile-time guard: a reason whose parameters are not all SafeValues (a plain
// string, say, which could carry a path) makes `unsafeParams` fail to type.
type UnsafeReason = { [R in ParamReason]: ParamsOf<R>[keyof ParamsOf<R>] extends SafeValue ? never : R }[ParamReason];
const unsafeParams: [UnsafeReason] extends [never] ? true : UnsafeReason = true;
void unsafeParams;

export const REASONS = Object.keys(REFUSALS) as Reason[];

/** The wire refusal for `reason`: its code and its one text. */
export const refusal = refusalsFrom(REFUSALS);

/** The failed {@link Result} for `reason`: what every refusing call site returns. */
export function refuse<R extends Reason>(reason: R, ...params: MessageArgs<(typeof REFUSALS)[R]>): Result<never> {
  return { ok: false, error: refusal(reason, ...params) };
}

/** The reason whose text a code carries when a refusal names only its code (a decoded or passed-through one). */
const CODE_REASON = {
  bad_request: "badRequest",
  invalid_path: "invalidPath",
  absolute_path: "absolutePath",
  path_escapes: "pathEscapes",
  unauthorized: "adminTokenRequired",
  forbidden: "lacksRight",
  outside_root: "outsideRoot",
  no_such_cap: "noSuchCap",
  not_found: "notFound",
  conflict: "fileDirectoryClash",
  precondition_failed: "preconditionFailed",
  too_large: "bodyLimit",
  length_required: "lengthRequired",
  range_not_satisfiable: "rangeNotSatisfiable",
  quota_exceeded: "quotaExceeded",
  unavailable: "unavailable",
} as const satisfies { [C in ErrorCode]: Reason };

/** Messages are fixed per code (in shared/refusals.ts) so they can never echo a root prefix or host path. */
export function defaultMessage(code: ErrorCode): string {
  return refusal(CODE_REASON[code]).message;
}
