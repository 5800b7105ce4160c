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
  "unavailable",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && (ERROR_CODES as readonly string[]).includes(value);
}

/** Messages are fixed per code so they can never echo a root prefix or host path. */
export function defaultMessage(code: ErrorCode): string {
  switch (code) {
    case "bad_request":
      return "bad request";
    case "invalid_path":
      return "invalid path";
    case "absolute_path":
      return "absolute paths forbidden";
    case "path_escapes":
      return "path escapes";
    case "unauthorized":
      return "admin token required";
    case "forbidden":
      return "capability lacks the right for this operation";
    case "outside_root":
      return "resolved outside root";
    case "no_such_cap":
      return "no such capability";
    case "not_found":
      return "nothing at that path";
    case "conflict":
      return "a file is where a directory is needed, or the reverse";
    case "precondition_failed":
      return "precondition failed";
    case "too_large":
      return "body too large";
    case "length_required":
      return "a body of known length is required";
    case "range_not_satisfiable":
      return "range not satisfiable";
    case "unavailable":
      return "storage temporarily unavailable";
  }
}
