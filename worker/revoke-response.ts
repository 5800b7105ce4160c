import type { RevokeOutcome } from "../durable-objects/cap-object.ts";
import type { Result } from "../shared/result.ts";
import type { RevokePending } from "../shared/wire-types.ts";
import { errorResponse } from "./http-error.ts";
import { jsonResponse } from "./json-response.ts";

/**
 * The answer to every revocation (a cap, a child, a root): 204 when the whole
 * subtree is dead, 202 when alarms are still finishing part of the cascade.
 */
export function revokeResponse(result: Result<RevokeOutcome>): Response {
  if (!result.ok) return errorResponse(result.error);
  // 202 says, truthfully, that some descendants are still being revoked (by alarms).
  if (result.value.pending > 0) {
    const body: RevokePending = { revoked: true, pendingDescendants: result.value.pending };
    return jsonResponse(body, { status: 202 });
  }
  return new Response(null, { status: 204 });
}
