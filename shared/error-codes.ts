import { type Reason, refusal } from "./refusals.ts";

/**
 * The wire error codes. Every refusal anywhere in capvault is one of these;
 * `worker/http-error.ts` maps each to exactly one HTTP status.
 */
export const ERROR_CODES = [
  "bad_request",
  "invalid_path",
  "absolute_path",
  "path_escapes",
  "unauthorized",
  "forbidden",
  "outside_root",
  "no_such_cap",
  "not_found",
  "conflict",
  "precondition_failed",
  "too_large",
  "length_required",
  "range_not_satisfiable",
  "quota_exceeded",
  "unavailable",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (ERROR_CODES as readonly string[]).includes(value);
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
