/**
 * A name in a listing comes from the vault, which may be hostile (or just
 * newer than this client). Before it becomes part of a local path on
 * `get -r` or `sync` down, it must be exactly one ordinary segment: never
 * empty, `.` or `..`, never holding a separator (`/`, or `\` which some
 * tools treat as one), never NUL or another control character. Joined under
 * LOCAL, such a name cannot leave LOCAL.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Longest relative path taken from a listing, in UTF-8 bytes: the vault's own key limit, which bounds depth. */
export const MAX_RELATIVE_PATH_BYTES = 1024;

/** Why `name` may not be used as a local name, or `null` when it may. */
export function unsafeVaultName(name: unknown): string | null {
  if (typeof name !== "string" || name === "") return "an empty name";
  if (name === "." || name === "..") return "a dot name";
  if (name.includes("/") || name.includes("\\")) return "a name holding a separator";
  if (CONTROL.test(name)) return "a name holding a control character";
  if (Buffer.byteLength(name) > 255) return "a name over 255 bytes";
  return null;
}
