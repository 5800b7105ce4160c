import type { Context } from "hono";
import { fail, ok, type Result } from "../shared/result.ts";

const MAX_JSON_BYTES = 64 * 1024;

/** Reads a small JSON request body; anything else is `bad_request`. */
export async function readJson(c: Context): Promise<Result<unknown>> {
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > MAX_JSON_BYTES) return fail("bad_request", "JSON body too large");
  const text = await c.req.text().catch(() => null);
  if (text === null || text.length > MAX_JSON_BYTES) return fail("bad_request", "unreadable body");
  try {
    return ok(JSON.parse(text === "" ? "{}" : text));
  } catch {
    return fail("bad_request", "malformed JSON");
  }
}
