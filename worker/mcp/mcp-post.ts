import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import {
  isInitializeRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type JSONRPCRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import type { SharedTransport } from "./shared-transport.ts";

/**
 * One POST of MCP's Streamable HTTP transport, stateless and in JSON
 * response mode, with the SDK's rules and answers (406, 415, 400 for a
 * message that is not JSON-RPC, a second initialize in a batch or an
 * unsupported protocol version; 202 for notifications alone), answered by
 * the shared server behind `transport`. The SDK's own transport is built for
 * one request and validated every message several times over; this is what
 * it did for a stateless POST, once.
 */
export async function answerPost(req: Request, body: unknown, transport: SharedTransport): Promise<PostAnswer> {
  const accept = req.headers.get("accept");
  if (!accept?.includes("application/json") || !accept.includes("text/event-stream")) {
    return refused(
      jsonRpcError(406, -32000, "Not Acceptable: Client must accept both application/json and text/event-stream"),
    );
  }
  if (!isJsonContentType(req.headers.get("content-type"))) {
    return refused(jsonRpcError(415, -32000, "Unsupported Media Type: Content-Type must be application/json"));
  }
  const messages: JSONRPCMessage[] = [];
  for (const raw of Array.isArray(body) ? body : [body]) {
    const parsed = JSONRPCMessageSchema.safeParse(raw);
    if (!parsed.success) return refused(jsonRpcError(400, -32700, "Parse error: Invalid JSON-RPC message"));
    messages.push(parsed.data);
  }
  // The full initialize schema only for what names the method: a failed parse costs more than the call.
  if (messages.some((m) => "method" in m && m.method === "initialize" && isInitializeRequest(m))) {
    if (messages.length > 1) {
      return refused(jsonRpcError(400, -32600, "Invalid Request: Only one initialization request is allowed"));
    }
  } else {
    const version = req.headers.get("mcp-protocol-version");
    if (version !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return refused(
        jsonRpcError(
          400,
          -32000,
          `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
        ),
      );
    }
  }
  // Parsed as JSON-RPC, a message with both a method and an id is a request.
  const requests = messages.filter((m): m is JSONRPCRequest => "method" in m && "id" in m);
  // Notifications and responses alone: nothing to answer, and a stateless server has no use for them.
  if (requests.length === 0) return refused(new Response(null, { status: 202 }));
  const answers = await transport.call(requests);
  return {
    response: Response.json(answers.length === 1 ? answers[0] : answers),
    succeeded: answers.every((a) => "result" in a && (a.result as { isError?: boolean }).isError !== true),
  };
}

/**
 * An answer, and whether it holds only results, no JSON-RPC or tool error.
 * Only a call that failed can have found its cap dead; one that succeeded
 * reached the cap while it was alive.
 */
export interface PostAnswer {
  response: Response;
  succeeded: boolean;
}

const refused = (response: Response): PostAnswer => ({ response, succeeded: false });

export function jsonRpcError(
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status, headers });
}
