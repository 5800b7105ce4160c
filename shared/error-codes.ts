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
  "legacy_token",
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
