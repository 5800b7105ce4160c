import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import {
  isInitializeRequest,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type JSONRPCRequest,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";
import { yieldTurn } from "../../shared/yield-turn.ts";
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
    response: jsonInSlices(answers.length === 1 ? answers[0] : answers),
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

/** Characters of a long string escaped and sent at a time. */
const SLICE_CHARS = 256 * 1024;

/**
 * `value` as a JSON response whose long strings (a file's text, a media
 * file's base64) are escaped and sent a slice at a time, a turn of the
 * runtime apart: serialising a 16 MB answer at once held up every other
 * request of the process for as long. A slice may end inside a surrogate
 * pair: JSON.stringify escapes each half, and JSON parsers join them again.
 */
export function jsonInSlices(value: unknown): Response {
  const marker = `capvault-long-${crypto.randomUUID()}-`;
  const long: string[] = [];
  const skeleton = JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== "string" || v.length <= SLICE_CHARS) return v;
    long.push(v);
    return `${marker}${long.length - 1}`;
  });
  const headers = { "content-type": "application/json" };
  if (long.length === 0) return new Response(skeleton, { headers });
  // Alternately skeleton text and the index of a long string; the marker's UUID appears nowhere else.
  const parts = skeleton.split(new RegExp(`"${marker}(\\d+)"`));
  const encoder = new TextEncoder();
  const pieces = (function* () {
    for (let i = 0; i < parts.length; i++) {
      if (i % 2 === 0) {
        yield parts[i]!;
        continue;
      }
      const text = long[Number(parts[i])]!;
      yield '"';
      for (let at = 0; at < text.length; at += SLICE_CHARS) {
        yield JSON.stringify(text.slice(at, at + SLICE_CHARS)).slice(1, -1);
      }
      yield '"';
    }
  })();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      await yieldTurn();
      const next = pieces.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(next.value));
    },
  });
  return new Response(body, { headers });
}
