import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import { type AppEnv, liveCap, publicOrigin } from "../cap-stub.ts";
import { capStubTextFiles } from "../cap-stub-text-files.ts";
import { errorResponse } from "../http-error.ts";
import { readJsonBody } from "../json-body.ts";
import { createCapMcpServer } from "./mcp-server.ts";
import { MAX_BATCH_MESSAGES } from "./request-budget.ts";

/** The MCP SDK's own default limit, kept: a write_file carries a whole file. */
const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/**
 * `/object/<token>/mcp`: MCP over Streamable HTTP, stateless. Each POST gets
 * a fresh server built for the cap's current rights and answers with JSON;
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
  const server = createCapMcpServer({ cap, files: capStubTextFiles(cap), origin: publicOrigin(c) }, info.rights);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  await server.connect(transport);
  let answer: Response;
  try {
    answer = await transport.handleRequest(c.req.raw, { parsedBody: body.value });
  } finally {
    await server.close();
  }
  // Revoked while the calls ran: answer like every other route for a dead cap.
  const still = await cap.describe();
  if (!still.ok) {
    await answer.body?.cancel().catch(() => undefined);
    return errorResponse(still.error);
  }
  return answer;
});

function jsonRpcError(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}
