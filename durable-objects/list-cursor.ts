import { refuse } from "../shared/refusals.ts";
import { isListableName } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";

export const MAX_LIST_LIMIT = 1000;

/**
 * A list cursor is the last name returned, base64url-encoded so clients treat
 * it as opaque. Decoding re-validates it as a single path segment, so a forged
 * cursor can only start a listing later in the same directory, never elsewhere.
 */
export function encodeCursor(name: string): string {
  const bytes = new TextEncoder().encode(name);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function decodeCursor(raw: string | null): Result<string | null> {
  if (raw === null || raw === "") return ok(null);
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) return refuse("invalidCursor");
  let name: string | null;
  try {
    const binary = atob(raw.replace(/-/g, "+").replace(/_/g, "/"));
    name = decodeUtf8Strict(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    name = null;
  }
  if (name === null) return refuse("invalidCursor");
  // Any valid segment: below a cap's root `~x` or `c:` is an ordinary name, and a page may end on one.
  if (!isListableName(name, false)) return refuse("invalidCursor");
  return ok(name);
}

/** A page size from 1 to `max`; absent means `max`. */
export function parseLimit(raw: string | null, max = MAX_LIST_LIMIT): Result<number> {
  if (raw === null || raw === "") return ok(max);
  if (!/^\d{1,4}$/.test(raw)) return refuse("limitRange", { max });
  const limit = Number(raw);
  if (limit < 1 || limit > max) return refuse("limitRange", { max });
  return ok(limit);
}
