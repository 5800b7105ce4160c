import { CapError } from "./cap-error.ts";

const ID_SHAPE = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Cap ids travel in the URL path (`/children/<id>`, `/admin/roots/<id>`).
 * Anything beyond plain base32-ish characters is refused before sending: the
 * WHATWG URL parser resolves `..` and even `%2e%2e` segments, so
 * `revokeChild("..")` would otherwise become `DELETE /object/<token>`, a
 * revocation of the caller's own cap.
 */
export function assertCapIdShape(id: string): void {
  if (typeof id !== "string" || !ID_SHAPE.test(id)) {
    throw new CapError("bad_request", 0, "a cap id is a short base32 string");
  }
}
