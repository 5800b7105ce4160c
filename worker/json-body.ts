import { readWithin } from "../shared/read-within.ts";
import { echoedName, refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { decodeChunksStrict } from "../shared/strict-utf8.ts";

/** Mint, move and admin bodies are small. */
export const SMALL_JSON_BYTES = 64 * 1024;
/** A JSON body that pauses this long, or takes this long in all, is refused (`bad_request`). */
const JSON_IDLE_MS = 10_000;
const JSON_TOTAL_MS = 60_000;
/** How much of an oversized body is read and discarded so the client gets its 413; past this the connection is cut. */
const DRAIN_LIMIT_BYTES = 16 * 1024 * 1024;

/**
 * The one reader of JSON request bodies. It counts bytes as they stream (a
 * declared or absent length can lie), so no body, chunked or not, is ever
 * buffered past `maxBytes`. An oversized body is read and discarded up to
 * {@link DRAIN_LIMIT_BYTES}: answering while the client is still sending
 * makes it see a connection reset instead of the 413.
 *
 * @example
 * const body = await readJsonBody(c.req.raw, SMALL_JSON_BYTES);
 * if (!body.ok) return errorResponse(body.error);
 */
export async function readJsonBody(
  request: Request,
  maxBytes: number,
  options: { emptyAs?: unknown } = {},
): Promise<Result<unknown>> {
  const body = await readTextBody(request, maxBytes);
  if (!body.ok) return body;
  const text = body.value;
  if (text === "" && "emptyAs" in options) return ok(options.emptyAs);
  try {
    return ok(JSON.parse(text ?? "\u0000"));
  } catch {
    return refuse("malformedJson");
  }
}

/** The request's body as text, read as {@link readJsonBody} reads it; `null` for bytes that are not UTF-8. */
export async function readTextBody(request: Request, maxBytes: number): Promise<Result<string | null>> {
  const tooLarge = refuse("bodyTooLarge", { limit: maxBytes });
  const declared = Number(request.headers.get("content-length") ?? "0");
  const reader = request.body?.getReader();
  if (declared > DRAIN_LIMIT_BYTES) {
    await reader?.cancel().catch(() => undefined);
    return tooLarge;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const deadline = Date.now() + JSON_TOTAL_MS;
  while (reader) {
    // A sender that stalls or drips must not hold the request (and, on the memory and MCP routes, a live cap) open.
    const next = await readWithin(reader, JSON_IDLE_MS, deadline);
    if (next === "timeout") {
      await reader.cancel().catch(() => undefined);
      return refuse("tooSlow");
    }
    const { done, value } = next;
    if (done) break;
    total += value.byteLength;
    if (total > DRAIN_LIMIT_BYTES) {
      await reader.cancel().catch(() => undefined);
      return tooLarge;
    }
    if (total <= maxBytes) chunks.push(value);
  }
  if (total > maxBytes) return tooLarge;
  return ok(decodeChunksStrict(chunks));
}

/** A JSON object with only the named fields, or `bad_request`. */
export function jsonObject(value: unknown, fields: readonly string[]): Result<Record<string, unknown>> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return refuse("expectedObject");
  const unknown = Object.keys(value).find((k) => !fields.includes(k));
  if (unknown !== undefined) return refuse("unknownField", { field: echoedName(unknown) });
  return ok(value as Record<string, unknown>);
}
