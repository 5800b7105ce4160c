import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { ErrorCode } from "../shared/error-codes.ts";
import type { CapFailure } from "../shared/result.ts";
import type { ErrorBody } from "../shared/wire-types.ts";
import { jsonResponse } from "./json-response.ts";

/** The one mapping from wire code to HTTP status. Exhaustive: a new code will not compile until it has a status. */
export function statusOf(code: ErrorCode): ContentfulStatusCode {
  switch (code) {
    case "bad_request":
    case "invalid_path":
    case "absolute_path":
    case "path_escapes":
      return 400;
    case "unauthorized":
      return 401;
    case "forbidden":
    case "outside_root":
      return 403;
    case "no_such_cap":
    case "not_found":
      return 404;
    case "conflict":
      return 409;
    // Gone: a format-0 token once named a cap; its admin re-issues it (docs/upgrading.md).
    case "legacy_token":
      return 410;
    case "length_required":
      return 411;
    case "precondition_failed":
      return 412;
    case "too_large":
      return 413;
    case "range_not_satisfiable":
      return 416;
    // Insufficient Storage: the request is fine, the subtree is full (shared/quota.ts).
    case "quota_exceeded":
      return 507;
    case "unavailable":
      return 503;
  }
}

/**
 * The one HTTP error type. Every refusal leaves through here as
 * `{ "error": { "code", "message" } }`, so a revoked, expired, forged or
 * unknown token all produce the same bytes.
 */
export function errorResponse(failure: CapFailure, headers?: HeadersInit): Response {
  const body: ErrorBody = { error: { code: failure.code, message: failure.message } };
  const response = jsonResponse(body, { status: statusOf(failure.code) });
  if (headers) {
    for (const [name, value] of new Headers(headers)) response.headers.set(name, value);
  }
  if (failure.code === "unauthorized") response.headers.set("WWW-Authenticate", 'Bearer realm="capvault admin"');
  return response;
}
