import { fail, ok, type Result } from "./result.ts";

export const RIGHTS = ["read", "write", "delete", "list", "subdir"] as const;
export type Right = (typeof RIGHTS)[number];

/**
 * Validates a client-supplied rights list: an array of known, distinct
 * rights. Returns them in canonical order so equal sets compare equal.
 */
export function parseRights(value: unknown): Result<Right[]> {
  if (!Array.isArray(value)) return fail("bad_request", "rights must be an array of strings");
  const seen = new Set<Right>();
  for (const item of value) {
    if (typeof item !== "string" || !(RIGHTS as readonly string[]).includes(item)) {
      return fail("bad_request", `unknown right; rights are ${RIGHTS.join(", ")}`);
    }
    if (seen.has(item as Right)) return fail("bad_request", "rights must not repeat");
    seen.add(item as Right);
  }
  return ok(RIGHTS.filter((r) => seen.has(r)));
}

/** True when every right in `wanted` is also in `held`: attenuation never grows rights. */
export function isSubset(wanted: readonly Right[], held: readonly Right[]): boolean {
  return wanted.every((r) => held.includes(r));
}
