import { type HolderJwk, parseHolderJwk } from "./holder-key.ts";
import { type Limits, parseLimits } from "./quota.ts";
import { echoedName, refuse } from "./refusals.ts";
import { ok, type Result } from "./result.ts";
import { parseRights, type Right } from "./rights.ts";

/** What a client may ask for when minting a cap (subdir) or a root (admin). */
export interface GrantRequest {
  path: string;
  rights: Right[] | null;
  ttlSeconds: number | null;
  label: string | null;
  /** The cap's own quota (shared/quota.ts); absent or all null: only what it inherits. */
  limits?: Limits;
  /**
   * `"all"`: the new cap sees the history its parent sees; absent or null: only
   * versions after its mint (durable-objects/cap-record.ts, `historyFrom`).
   */
  history?: "all" | null;
  /** A holder-bound cap's public key (issue 20); absent or null: a bearer cap. */
  holder?: HolderJwk | null;
}

/** A hundred years: long enough for "never", short enough to stay a safe integer in ms. */
export const MAX_TTL_SECONDS = 100 * 365 * 24 * 3600;
const MAX_LABEL_LENGTH = 256;
const LABEL_FORBIDDEN = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/u;

/**
 * Validates the JSON body of a mint request. Unknown fields are refused rather
 * than ignored, so a typo like `right: ["read"]` cannot silently mint a cap
 * with every right.
 */
export function parseGrantRequest(
  body: unknown,
  options: { pathField?: "path" | "prefix"; extraFields?: readonly string[] } = {},
): Result<GrantRequest> {
  const pathField = options.pathField ?? "path";
  if (typeof body !== "object" || body === null || Array.isArray(body)) return refuse("expectedObject");
  const fields = body as Record<string, unknown>;
  const known = new Set([
    pathField,
    "rights",
    "ttlSeconds",
    "label",
    "maxBytes",
    "maxFiles",
    "history",
    "holder",
    ...(options.extraFields ?? []),
  ]);
  const unknown = Object.keys(fields).find((k) => !known.has(k));
  if (unknown !== undefined) return refuse("unknownField", { field: echoedName(unknown) });

  const { rights, ttlSeconds, label, history, holder } = fields;
  const path = fields[pathField] ?? "";
  if (typeof path !== "string") return refuse("notAString", { field: pathField });
  let parsedRights: Right[] | null = null;
  if (rights !== undefined && rights !== null) {
    const r = parseRights(rights);
    if (!r.ok) return r;
    parsedRights = r.value;
  }
  if (ttlSeconds !== undefined && ttlSeconds !== null) {
    if (
      typeof ttlSeconds !== "number" ||
      !Number.isInteger(ttlSeconds) ||
      ttlSeconds < 1 ||
      ttlSeconds > MAX_TTL_SECONDS
    ) {
      return refuse("ttlRange", { max: MAX_TTL_SECONDS });
    }
  }
  if (label !== undefined && label !== null) {
    if (
      typeof label !== "string" ||
      label.length > MAX_LABEL_LENGTH ||
      LABEL_FORBIDDEN.test(label) ||
      !label.isWellFormed()
    ) {
      return refuse("labelInvalid", { max: MAX_LABEL_LENGTH });
    }
  }
  if (history !== undefined && history !== null && history !== "all") return refuse("historyInvalid");
  let parsedHolder: HolderJwk | null = null;
  if (holder !== undefined && holder !== null) {
    const key = parseHolderJwk(holder);
    if (!key.ok) return refuse("holderInvalid");
    parsedHolder = key.jwk;
  }
  const limits = parseLimits(fields);
  if (!limits.ok) return limits;
  return ok({
    path,
    rights: parsedRights,
    ttlSeconds: (ttlSeconds as number | undefined) ?? null,
    label: (label as string | undefined) ?? null,
    limits: limits.value,
    history: history === "all" ? "all" : null,
    holder: parsedHolder,
  });
}
