import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { Hono } from "hono";
import { capStubTextFiles } from "../../memory-tool/cap-stub-text-files.ts";
import { liveCap, publicOrigin, type AppEnv } from "../cap-stub.ts";
import { errorResponse } from "../http-error.ts";
import { createCapMcpServer } from "./mcp-server.ts";

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
  if (c.req.method !== "POST") {
    return Response.json(
      { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed: this stateless server only answers POST." }, id: null },
      { status: 405, headers: { Allow: "POST" } },
    );
  }
  const server = createCapMcpServer({ cap, files: capStubTextFiles(cap), origin: publicOrigin(c) }, info.rights);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  try {
    return await transport.handleRequest(c.req.raw);
  } finally {
    await server.close();
  }
});
