import type { ErrorCode } from "./error-codes.ts";
import type { EchoedName, MessageArgs, RefusalEntry } from "./refusal-entry.ts";
import { refusalsFrom } from "./refusal-entry.ts";
import { FILE_REFUSALS } from "./refusals-files.ts";
import { PROTOCOL_REFUSALS } from "./refusals-protocols.ts";
import type { Result } from "./result.ts";
import type { Right } from "./rights.ts";

export { type EchoedName, echoedName, type RefusalEntry, refusalsFrom } from "./refusal-entry.ts";

/** What a message may be built from: numbers, rights, fixed words and names the client sent. */
type SafeValue = number | boolean | readonly Right[] | EchoedName | "r2" | "disk" | "path" | "prefix";
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
  ...FILE_REFUSALS,
  // -- caps and rights
  noSuchCap: { code: "no_such_cap", message: "no such capability" },
  // Every 32-character token, minted or made up, gets these same bytes: no object is asked (docs/upgrading.md).
  legacyToken: {
    code: "legacy_token",
    message:
      "this token was minted by capvault before signed tokens (state format 0) and opens nothing now; " +
      "the vault's admin re-issues these caps with `capvault reissue-legacy`: see docs/upgrading.md",
  },
  reissueCutoffUnknown: {
    code: "bad_request",
    message:
      "this vault holds no record of when it left state format 0: give mintedBefore, the time its first signed token " +
      "could be minted (capvault reissue-legacy --minted-before TIME; see docs/upgrading.md)",
  },
  mintedBeforeInvalid: { code: "bad_request", message: "mintedBefore must be an ISO 8601 time, not in the future" },
  mintedBeforeAfterRecord: {
    code: "bad_request",
    message:
      "this vault recorded when it left state format 0, and mintedBefore is later: caps signed after that would be " +
      "re-issued and their tokens stop working; leave mintedBefore out (see docs/upgrading.md)",
  },
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
  // -- export and import of a whole vault (docs/export-import.md)
  importMalformed: { code: "bad_request", message: "an import record is malformed; nothing of it was stored" },
  importNotEmpty: {
    code: "conflict",
    message: "this vault already has root caps: import into an empty vault, or ask for the merge rule (--merge)",
  },
  importCollision: { code: "conflict", message: "a cap or root of the archive already exists in this vault" },
  importHistoryExists: {
    code: "conflict",
    message: "a storage root of the archive already holds version history in this vault",
  },
  importKeyMismatch: {
    code: "conflict",
    message: "this vault signs cap tokens with another key than the archive's; nothing was imported",
  },
  importOtherStaged: { code: "conflict", message: "another import is staged in this vault" },
  importNotStaged: { code: "conflict", message: "no import of this archive is open in this vault" },
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
  ...PROTOCOL_REFUSALS,
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
  legacy_token: "legacyToken",
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
