import { Hono } from "hono";
import { type AppEnv, liveCap, publicOrigin } from "../cap-stub.ts";
import { capStubTextFiles } from "../cap-stub-text-files.ts";
import { errorResponse } from "../http-error.ts";
import { readJsonBody } from "../json-body.ts";
import { answerPost, jsonRpcError } from "./mcp-post.ts";
import { sharedCapServer } from "./mcp-server.ts";
import { budgetedFiles, MAX_BATCH_MESSAGES, RequestBudget } from "./request-budget.ts";
import { type RequestScope, runInScope } from "./request-scope.ts";

/** The MCP SDK's own default limit, kept: a write_file carries a whole file. */
const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/**
 * `/object/<token>/mcp`: MCP over Streamable HTTP, stateless. Each POST is
 * answered, in JSON, by the isolate's server for the cap's current rights,
 * its calls running in a scope of their own (the cap, a fresh budget);
 * there is no session and no server-initiated stream, so GET and DELETE are
 * 405. An unknown or revoked token is the usual 404 `no_such_cap`.
 */
export const mcpRoutes = new Hono<AppEnv>();

mcpRoutes.all("/:token/mcp", async (c) => {
  // Rights are read per request, so a narrowed or revoked cap shows at once.
  const live = await liveCap(c, c.req.param("token"));
  if (!live.ok) return errorResponse(live.error);
  const { cap, info } = live.value;
  if (c.req.method !== "POST")
    return jsonRpcError(405, -32000, "Method not allowed: this stateless server only answers POST.", { Allow: "POST" });
  // The body is read here, not by the transport, to refuse an oversized batch before any of it runs.
  const body = await readJsonBody(c.req.raw, MAX_MCP_BODY_BYTES);
  if (!body.ok) {
    return body.error.code === "too_large"
      ? jsonRpcError(413, -32000, body.error.message)
      : jsonRpcError(400, -32700, `Parse error: ${body.error.message}`);
  }
  if (Array.isArray(body.value) && body.value.length > MAX_BATCH_MESSAGES) {
    return jsonRpcError(400, -32600, `Invalid Request: a batch holds at most ${MAX_BATCH_MESSAGES} messages`);
  }
  const budget = new RequestBudget();
  const context = { cap, files: budgetedFiles(capStubTextFiles(cap), budget), origin: publicOrigin(c) };
  const scope: RequestScope = { context, budget };
  const answer = await runInScope(scope, () => answerPost(c.req.raw, body.value, sharedCapServer(info.rights)));
  // Every call that reached the cap found it alive (it was at the start): the answer stands.
  if (!scope.failed) return answer;
  // A call failed, perhaps on a cap revoked while the calls ran: then answer like every other route for a dead cap.
  const still = await cap.describe();
  if (!still.ok) {
    await answer.body?.cancel().catch(() => undefined);
    return errorResponse(still.error);
  }
  return answer;
});
