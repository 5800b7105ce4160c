import { refuse } from "../shared/refusals.ts";
import { isListableName, MAX_KEY_BYTES } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import { MAX_DEPTH } from "../storage-adapters/tree-page.ts";

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
  const name = decodeOpaque(raw);
  if (name === undefined) return refuse("invalidCursor");
  // Any valid segment: below a cap's root `~x` or `c:` is an ordinary name, and a page may end on one.
  if (name !== null && !isListableName(name, false)) return refuse("invalidCursor");
  return ok(name);
}

/**
 * A recursive listing's cursor: the last path walked below the listed folder,
 * which may be a key no cap can name (written around the vault), so it is
 * not parsed as a path. It is only ever compared with paths below that
 * folder (R2 lists from `prefix + cursor` within the prefix), so a forged
 * one can only start the listing elsewhere in the same subtree.
 */
export function decodeTreeCursor(raw: string | null): Result<string | null> {
  const path = decodeOpaque(raw);
  if (path === undefined || (path !== null && (path === "" || utf8.encode(path).length > MAX_KEY_BYTES)))
    return refuse("invalidCursor");
  return ok(path);
}

/** `null` for no cursor, `undefined` for one that is not base64url of UTF-8. */
function decodeOpaque(raw: string | null): string | null | undefined {
  if (raw === null || raw === "") return null;
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) return undefined;
  try {
    const binary = atob(raw.replace(/-/g, "+").replace(/_/g, "/"));
    return decodeUtf8Strict(Uint8Array.from(binary, (c) => c.charCodeAt(0))) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Listing depth: absent means 1 (direct children), 0 means every file below. */
export function parseDepth(raw: string | null): Result<number> {
  if (raw === null || raw === "") return ok(1);
  if (!/^\d{1,3}$/.test(raw) || Number(raw) > MAX_DEPTH) return refuse("depthRange", { max: MAX_DEPTH });
  return ok(Number(raw));
}

const utf8 = new TextEncoder();

/** A page size from 1 to `max`; absent means `max`. */
export function parseLimit(raw: string | null, max = MAX_LIST_LIMIT): Result<number> {
  if (raw === null || raw === "") return ok(max);
  if (!/^\d{1,4}$/.test(raw)) return refuse("limitRange", { max });
  const limit = Number(raw);
  if (limit < 1 || limit > max) return refuse("limitRange", { max });
  return ok(limit);
}
