import { Hono } from "hono";
import { capStubTextFiles } from "../memory-tool/cap-stub-text-files.ts";
import { createMemoryHandler } from "../memory-tool/memory-handler.ts";
import { fail, failure, ok, type Result } from "../shared/result.ts";
import { capStub, type AppEnv } from "./cap-stub.ts";
import { errorResponse } from "./http-error.ts";

/** A `create` carries a whole file, so this is larger than other JSON bodies. */
const MAX_MEMORY_BODY_BYTES = 4 * 1024 * 1024;

/**
 * `POST /object/<token>/memory`: the body is one `memory_20250818` tool input
 * (`{ "command": "view", "path": "/memories" }`), the answer is the tool's
 * result string as `text/plain`, status 200, including results that start
 * with `Error:` (they go back to the model as they are); such results also
 * carry `Capvault-Error-Code: <wire code>`. A body that is not a JSON object
 * is a 400 and an unknown or revoked token the usual 404, both as JSON errors.
 */
export const memoryRoutes = new Hono<AppEnv>();

memoryRoutes.post("/:token/memory", async (c) => {
  const cap = await capStub(c, c.req.param("token"));
  if (!cap) return errorResponse(failure("no_such_cap"));
  // Liveness first, so a dead token answers the same bytes whatever the body.
  const info = await cap.describe();
  if (!info.ok) return errorResponse(info.error);
  const body = await readBoundedJson(c.req.raw, MAX_MEMORY_BODY_BYTES);
  if (!body.ok) return errorResponse(body.error);
  if (typeof body.value !== "object" || body.value === null || Array.isArray(body.value)) {
    return errorResponse(failure("bad_request", "expected a JSON object: the memory tool's input"));
  }
  const result = await createMemoryHandler(capStubTextFiles(cap))(body.value);
  // Revoked while the command ran: answer like every other route for a dead cap.
  if (result.code === "no_such_cap") return errorResponse(failure("no_such_cap"));
  const headers: Record<string, string> = { "Content-Type": "text/plain; charset=utf-8" };
  if (result.isError) headers["Capvault-Error-Code"] = result.code;
  return new Response(result.text, { status: 200, headers });
});

/** Reads at most `maxBytes` of a JSON body, counting as it streams (a declared length can lie). */
async function readBoundedJson(request: Request, maxBytes: number): Promise<Result<unknown>> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) return fail("too_large", `the request body is limited to ${maxBytes} bytes`);
  const reader = request.body?.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return fail("too_large", `the request body is limited to ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return ok(JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes)));
  } catch {
    return fail("bad_request", "malformed JSON");
  }
}
