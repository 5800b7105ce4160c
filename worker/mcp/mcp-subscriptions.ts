import { AsyncLocalStorage } from "node:async_hooks";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { MAX_MCP_SUBSCRIPTIONS, MAX_MCP_URI_CHARS } from "../../durable-objects/cap-mcp-sessions.ts";
import { parseRelPath } from "../../shared/rel-path.ts";
import type { CapFailure } from "../../shared/result.ts";
import type { Right } from "../../shared/rights.ts";
import type { CapStub } from "../cap-stub.ts";
import { errorResponse } from "../http-error.ts";
import { pathOf } from "./cap-resources.ts";
import { changeStream, changesList, messageFrame, sseResponse, takeStreamSlot } from "./mcp-change-stream.ts";
import { jsonRpcError } from "./mcp-post.ts";
import { mcpRefusal } from "./mcp-refusals.ts";
import type { RequestScope } from "./request-scope.ts";

/**
 * MCP 2025-06-18 / 2025-11-25 resource subscriptions: `resources/subscribe`
 * and `resources/unsubscribe` on a POST, the notifications on the session's
 * GET stream. A cap with read is answered `Mcp-Session-Id` at initialize;
 * the session's subscriptions live in the cap's object (cap-mcp-sessions.ts),
 * whichever isolate a request reaches. Everything else stays stateless: the
 * session id names nothing but a set of subscriptions.
 */

const SESSION_HEADER = "mcp-session-id";
const SESSION_ID = /^[0-9a-f-]{36}$/;
const sessions = new AsyncLocalStorage<string | null>();

/** Runs `fn` (a POST's calls) knowing the session the request names, if any. */
export function runWithSession<T>(request: Request, fn: () => T): T {
  return sessions.run(sessionOf(request), fn);
}

function sessionOf(request: Request): string | null {
  const session = request.headers.get(SESSION_HEADER);
  return session !== null && SESSION_ID.test(session) ? session : null;
}

/** `response` to `body`, with a new session id when it answers an initialize of a cap that can subscribe. */
export function withNewSession(body: unknown, rights: readonly Right[], response: Response): Response {
  const initialize = (body as { method?: unknown } | null)?.method === "initialize";
  if (initialize && rights.includes("read") && response.status === 200)
    response.headers.set(SESSION_HEADER, crypto.randomUUID());
  return response;
}

/** The cap-relative path a subscribed URI names, or `null` for a URI of no file under the cap. */
export function subscribedPath(uri: string): string | null {
  const raw = pathOf(uri);
  if (raw === null) return null;
  const path = parseRelPath(raw);
  return path.ok && path.value.text !== "" ? path.value.text : null;
}

const mcpFailure = (code: number, failure: CapFailure) => new McpError(code, `${failure.code}: ${failure.message}`);

/** The subscribe and unsubscribe methods, and their capabilities, on a shared 2025-era server of a cap with read. */
export function registerSubscriptions(server: McpServer, rights: readonly Right[], scope: () => RequestScope): void {
  if (!rights.includes("read")) return;
  const protocol = server.server;
  protocol.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  const session = () => {
    const id = sessions.getStore() ?? null;
    if (id === null) throw mcpFailure(ErrorCode.InvalidRequest, mcpRefusal("subscribeNeedsSession"));
    return id;
  };
  protocol.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const id = session();
    const { uri } = request.params;
    const path = subscribedPath(uri);
    if (path === null) throw mcpFailure(ErrorCode.InvalidParams, mcpRefusal("notACapUri"));
    const done = await scope().context.cap.mcpSubscribe(id, path, uri);
    if (!done.ok) throw mcpFailure(ErrorCode.InvalidParams, done.error);
    if (done.value === "no_session") throw mcpFailure(ErrorCode.InvalidRequest, mcpRefusal("subscribeNeedsSession"));
    if (done.value === "full")
      throw mcpFailure(
        ErrorCode.InvalidRequest,
        mcpRefusal("tooManySubscriptions", { max: MAX_MCP_SUBSCRIPTIONS, chars: MAX_MCP_URI_CHARS }),
      );
    return {};
  });
  protocol.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    const done = await scope().context.cap.mcpUnsubscribe(session(), request.params.uri);
    if (!done.ok) throw mcpFailure(ErrorCode.InvalidParams, done.error);
    return {};
  });
}

/**
 * `GET /mcp`: the session's stream of `notifications/resources/updated`
 * (what it subscribed to) and `notifications/resources/list_changed` (a
 * file created, deleted or moved under the cap), each event's id the
 * version it follows, so a reconnect with `Last-Event-ID` misses nothing.
 * Ends when the cap is revoked or expires, or when the reader falls too far
 * behind (it reconnects from its last id). Without a session: 405, as a
 * stateless server answers.
 */
export async function answerSessionStream(request: Request, cap: CapStub, capId: string): Promise<Response> {
  const session = sessionOf(request);
  if (session === null)
    return jsonRpcError(405, -32000, "Method not allowed: a GET stream needs the session initialize answered with.", {
      Allow: "POST",
    });
  if (!request.headers.get("accept")?.includes("text/event-stream"))
    return jsonRpcError(406, -32000, "Not Acceptable: Client must accept text/event-stream");
  const slot = takeStreamSlot(capId);
  if (!slot.ok) return errorResponse(slot.error);
  const feed = await cap.mcpSessionFeed(session, request.headers.get("last-event-id"));
  if (!feed.ok) {
    slot.value();
    return errorResponse(feed.error);
  }
  const body = changeStream(feed.value, {
    frames: ({ uris = [], operation, version }) => {
      let out = "";
      for (const uri of uris)
        out += messageFrame({ jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } }, version);
      if (changesList(operation))
        out += messageFrame({ jsonrpc: "2.0", method: "notifications/resources/list_changed" }, version);
      return out;
    },
    ended: slot.value,
    signal: request.signal,
  });
  return sseResponse(body, { [SESSION_HEADER]: session });
}
