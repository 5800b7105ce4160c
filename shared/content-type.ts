import { refuse } from "./refusals.ts";
import { ok, type Result } from "./result.ts";

/**
 * The longest Content-Type a file may be stored with, in bytes (all ASCII,
 * so characters). Long enough for any real type with its parameters; short
 * enough that no stored type grows every answer's header block.
 */
export const MAX_CONTENT_TYPE_BYTES = 1024;

/**
 * RFC 9110 field-value, visible ASCII only: no CR, LF, NUL or other control
 * (R2 stores one and then fails every read of the file; disk would store it
 * where R2 refuses, so the backends would disagree), no leading or trailing
 * blank (HTTP strips those, RPC does not).
 */
const FIELD_VALUE = /^(?:[\x21-\x7e](?:[\x20\x21-\x7e\t]*[\x21-\x7e])?)?$/;

/**
 * The Content-Type a write stores: the one asked (any route or transport),
 * absent or empty meaning the default, or a refusal when it could not be
 * served back as a header on every backend.
 */
export function contentTypeOf(raw: string | null | undefined, fallback: string): Result<string> {
  if (raw === null || raw === undefined || raw === "") return ok(fallback);
  if (typeof raw !== "string" || raw.length > MAX_CONTENT_TYPE_BYTES || !FIELD_VALUE.test(raw))
    return refuse("contentTypeInvalid", { max: MAX_CONTENT_TYPE_BYTES });
  return ok(raw);
}
