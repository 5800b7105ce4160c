import { refuse } from "./refusals.ts";
import { ok, type Result } from "./result.ts";

/**
 * How much history a root keeps (set when the admin mints it; every cap
 * minted below inherits it): at most `keepVersions` versions per path, none
 * older than `keepDays`. Both bounds always hold, so a root's history is
 * bounded by its writes over `keepDays`, and a path's by `keepVersions`.
 */
export interface Retention {
  keepVersions: number;
  keepDays: number;
}

export const DEFAULT_RETENTION: Retention = { keepVersions: 100, keepDays: 30 };
export const MAX_KEEP_VERSIONS = 10_000;
export const MAX_KEEP_DAYS = 3_650;

/** The retention fields of a mint request; absent (or null) fields take the defaults. */
export function parseRetention(fields: Record<string, unknown>): Result<Retention> {
  const { keepVersions = null, keepDays = null } = fields;
  if (keepVersions !== null && !inRange(keepVersions, MAX_KEEP_VERSIONS))
    return refuse("keepVersionsRange", { max: MAX_KEEP_VERSIONS });
  if (keepDays !== null && !inRange(keepDays, MAX_KEEP_DAYS)) return refuse("keepDaysRange", { max: MAX_KEEP_DAYS });
  return ok({
    keepVersions: (keepVersions as number | null) ?? DEFAULT_RETENTION.keepVersions,
    keepDays: (keepDays as number | null) ?? DEFAULT_RETENTION.keepDays,
  });
}

function inRange(value: unknown, max: number): boolean {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= max;
}
