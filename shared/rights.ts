import { refuse } from "./refusals.ts";
import { ok, type Result } from "./result.ts";

export const RIGHTS = ["read", "write", "delete", "list", "subdir"] as const;
export type Right = (typeof RIGHTS)[number];

/**
 * Validates a client-supplied rights list: an array of known, distinct
 * rights. Returns them in canonical order so equal sets compare equal.
 */
export function parseRights(value: unknown): Result<Right[]> {
  if (!Array.isArray(value)) return refuse("rightsNotArray");
  const seen = new Set<Right>();
  for (const item of value) {
    if (typeof item !== "string" || !(RIGHTS as readonly string[]).includes(item)) {
      return refuse("unknownRight", { known: RIGHTS });
    }
    if (seen.has(item as Right)) return refuse("rightsRepeat");
    seen.add(item as Right);
  }
  return ok(RIGHTS.filter((r) => seen.has(r)));
}

/** True when every right in `wanted` is also in `held`: attenuation never grows rights. */
export function isSubset(wanted: readonly Right[], held: readonly Right[]): boolean {
  return wanted.every((r) => held.includes(r));
}
