import { echoedName, refusal } from "../../shared/refusals.ts";
import { rpcError } from "./rpc-error.ts";

/**
 * capnweb checks no types: a peer can pass anything anywhere. These turn an
 * argument into what the HTTP route would have parsed, or throw the
 * refusal the HTTP route gives for the same mistake.
 */

/** A path as the cap's parser takes it: a string, or absent (null) as an absent query parameter. */
export function pathArg(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw rpcError(refusal("notAString", { field: "path" }));
  return value;
}

/** An options object holding only `fields` (absent reads as `{}`); an unknown field is refused, as in JSON bodies. */
export function optionsArg(value: unknown, fields: readonly string[]): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw rpcError(refusal("rpcOptions"));
  const unknown = Object.keys(value).find((key) => !fields.includes(key));
  if (unknown !== undefined) throw rpcError(refusal("unknownField", { field: echoedName(unknown) }));
  return value as Record<string, unknown>;
}

/** A query-style value (cursor, limit, depth) as the text the HTTP route would have received. */
export function queryArg(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value === "string") return value;
  // A non-integer number becomes text the parser refuses with its own range message.
  if (typeof value === "number") return String(value);
  throw rpcError(refusal("badRequest"));
}

/** A header-style value (contentType, ifMatch, ifNoneMatch): a string or absent. */
export function headerArg(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw rpcError(refusal("badRequest"));
  return value;
}

/** The bytes of a write: binary as it is, a string as its UTF-8. */
export function bytesArg(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typeof value === "string") return new TextEncoder().encode(value);
  throw rpcError(refusal("rpcBytes"));
}
