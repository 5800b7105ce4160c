import { Hono } from "hono";
import { createMemoryHandler } from "../memory-tool/memory-handler.ts";
import { refusal } from "../shared/refusals.ts";
import { type AppEnv, liveCap } from "./cap-stub.ts";
import { capStubTextFiles } from "./cap-stub-text-files.ts";
import { errorResponse } from "./http-error.ts";
import { readJsonBody } from "./json-body.ts";

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
  // Liveness first, so a dead token answers the same bytes whatever the body.
  const live = await liveCap(c, c.req.param("token"));
  if (!live.ok) return errorResponse(live.error);
  const { cap } = live.value;
  const body = await readJsonBody(c.req.raw, MAX_MEMORY_BODY_BYTES);
  if (!body.ok) return errorResponse(body.error);
  if (typeof body.value !== "object" || body.value === null || Array.isArray(body.value)) {
    return errorResponse(refusal("expectedMemoryInput"));
  }
  const result = await createMemoryHandler(capStubTextFiles(cap))(body.value);
  // Revoked while the command ran: answer like every other route for a dead cap.
  if (result.code === "no_such_cap") return errorResponse(refusal("noSuchCap"));
  const headers: Record<string, string> = { "Content-Type": "text/plain; charset=utf-8" };
  if (result.isError) headers["Capvault-Error-Code"] = result.code;
  return new Response(result.text, { status: 200, headers });
});
