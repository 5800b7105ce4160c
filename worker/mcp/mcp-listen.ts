import { MAX_MCP_SUBSCRIPTIONS, MAX_MCP_URI_CHARS } from "../../durable-objects/cap-mcp-sessions.ts";
import type { CapFailure } from "../../shared/result.ts";
import type { Right } from "../../shared/rights.ts";
import { RELEASE } from "../../shared/state-format.ts";
import type { CapStub } from "../cap-stub.ts";
import { errorResponse } from "../http-error.ts";
import { changeStream, changesList, messageFrame, sseResponse, takeStreamSlot } from "./mcp-change-stream.ts";
import { mcpRefusal } from "./mcp-refusals.ts";
import { subscribedPath } from "./mcp-subscriptions.ts";

/** Where 2026-07-28 stamps the subscription a notification belongs to (the listen request's id). */
const SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
const SERVER_INFO = "io.modelcontextprotocol/serverInfo";
const SERVER_IDENTITY = { name: "capvault", version: RELEASE };

/** What a cap's server honours of a listen filter: the two resource kinds, with read. */
export const LISTEN_CAPABILITIES = { subscribe: true, listChanged: true } as const;

interface ListenRequest {
  id: string | number;
  params?: { notifications?: unknown };
}

/** Whether a parsed 2026-era body is one `subscriptions/listen` request. */
export function isListenRequest(body: unknown): body is ListenRequest {
  const message = body as { method?: unknown; id?: unknown } | null;
  return (
    message?.method === "subscriptions/listen" && (typeof message.id === "string" || typeof message.id === "number")
  );
}

const rpcError = (id: string | number, code: number, message: string) =>
  Response.json({ jsonrpc: "2.0", id, error: { code, message } }, { status: 200 });
const refused = (id: string | number, code: number, failure: CapFailure) =>
  rpcError(id, code, `${failure.code}: ${failure.message}`);

/**
 * `subscriptions/listen` (MCP 2026-07-28) on the cap's watch feed, in the
 * wire shape of the official SDK v2's listen router: the acknowledgement
 * with the honoured filter first, then `notifications/resources/updated`
 * for the URIs asked for and `notifications/resources/list_changed`, each
 * stamped with the subscription id; when the cap is revoked or expires (or
 * the reader falls too far behind) the stream ends with the listen's
 * `complete` result, and the client listens again if it still may. The
 * filter is refused whole, before the acknowledgement, for a URI of no file
 * under the cap or past the bounds.
 */
export async function answerListen(
  request: Request,
  listen: ListenRequest,
  cap: CapStub,
  capId: string,
  rights: readonly Right[],
): Promise<Response> {
  const { id } = listen;
  const filter = listen.params?.notifications as
    | { resourcesListChanged?: unknown; resourceSubscriptions?: unknown }
    | undefined;
  const uris = filter?.resourceSubscriptions;
  if (
    typeof filter !== "object" ||
    filter === null ||
    (uris !== undefined && (!Array.isArray(uris) || !uris.every((u) => typeof u === "string")))
  )
    return rpcError(id, -32602, "Invalid params: 'notifications' is required and must be a valid SubscriptionFilter");
  const read = rights.includes("read");
  const honored: { resourcesListChanged?: true; resourceSubscriptions?: string[] } = {};
  if (read && filter.resourcesListChanged === true) honored.resourcesListChanged = true;
  const byPath = new Map<string, string[]>();
  if (read && uris && uris.length > 0) {
    if (uris.length > MAX_MCP_SUBSCRIPTIONS || uris.some((u) => u.length > MAX_MCP_URI_CHARS))
      return refused(
        id,
        -32602,
        mcpRefusal("tooManySubscriptions", { max: MAX_MCP_SUBSCRIPTIONS, chars: MAX_MCP_URI_CHARS }),
      );
    for (const uri of new Set(uris)) {
      const path = subscribedPath(uri);
      if (path === null) return refused(id, -32602, mcpRefusal("notACapUri"));
      byPath.set(path, [...(byPath.get(path) ?? []), uri]);
    }
    honored.resourceSubscriptions = [...new Set(uris)];
  }
  const stamp = { [SUBSCRIPTION_ID]: id };
  const ack = messageFrame({
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: { notifications: honored, _meta: stamp },
  });
  const complete = messageFrame({
    jsonrpc: "2.0",
    id,
    result: { resultType: "complete", _meta: { ...stamp, [SERVER_INFO]: SERVER_IDENTITY } },
  });
  // Nothing honoured: acknowledged and complete at once, as the SDK's router answers.
  if (Object.keys(honored).length === 0) return sseResponse(new Blob([ack, complete]).stream());
  const slot = takeStreamSlot(capId);
  if (!slot.ok) return refused(id, -32603, slot.error);
  const feed = await cap.watch(null);
  if (!feed.ok) {
    slot.value();
    return errorResponse(feed.error);
  }
  const body = changeStream(feed.value, {
    first: ack,
    frames: ({ path, operation }) => {
      let out = "";
      for (const uri of byPath.get(path) ?? [])
        out += messageFrame({
          jsonrpc: "2.0",
          method: "notifications/resources/updated",
          params: { uri, _meta: stamp },
        });
      if (honored.resourcesListChanged && changesList(operation))
        out += messageFrame({
          jsonrpc: "2.0",
          method: "notifications/resources/list_changed",
          params: { _meta: stamp },
        });
      return out;
    },
    last: () => complete,
    ended: slot.value,
    signal: request.signal,
  });
  return sseResponse(body);
}
