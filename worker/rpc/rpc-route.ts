import { RpcSession, type RpcSessionOptions } from "capnweb";
import { Hono } from "hono";
import { refusal, refuse } from "../../shared/refusals.ts";
import { type AppEnv, liveCap, publicOrigin } from "../cap-stub.ts";
import { errorResponse } from "../http-error.ts";
import { readTextBody } from "../json-body.ts";
import { BatchTransport } from "./batch-transport.ts";
import { CapTarget } from "./cap-target.ts";
import { ClosingTransport } from "./closing-transport.ts";
import { checkBatch } from "./rpc-batch-check.ts";
import { redactError } from "./rpc-error.ts";
import { RPC_LIMITS } from "./rpc-limits.ts";
import { RpcSessionBudget } from "./rpc-session-budget.ts";

/**
 * `/object/<token>/rpc`: a Cap'n Web session whose main object is the cap,
 * as one HTTP batch (POST) or a WebSocket (GET with `Upgrade: websocket`).
 * A dead, unknown or forged token gets the HTTP `no_such_cap` before any
 * session starts; a refused batch (too big, too deep, malformed) is answered
 * as a contract error with nothing run.
 */
export const rpcRoutes = new Hono<AppEnv>();

const SESSION_OPTIONS: RpcSessionOptions = {
  onSendError: redactError,
  limits: { maxDepth: RPC_LIMITS.depth, maxMessageSize: RPC_LIMITS.messageBytes },
};

rpcRoutes.post("/:token/rpc", async (c) => {
  const token = c.req.param("token");
  const live = await liveCap(c, token);
  if (!live.ok) return errorResponse(live.error);
  const body = await readTextBody(c.req.raw, RPC_LIMITS.messageBytes);
  if (!body.ok) return errorResponse(body.error);
  const batch = body.value === null ? refuse("rpcMalformed") : checkBatch(body.value);
  if (!batch.ok) return errorResponse(batch.error);
  const budget = new RpcSessionBudget("batch");
  const target = new CapTarget(live.value.cap, token, { env: c.env, origin: publicOrigin(c), budget }, true);
  const transport = new BatchTransport(batch.value);
  const session = new RpcSession(transport, target, SESSION_OPTIONS);
  try {
    await transport.allRead;
  } catch {
    // capnweb aborted on a message it cannot read: the batch is refused whole, and no call ran.
    budget.refuseAll();
    return errorResponse(refusal("rpcMalformed"));
  }
  budget.open();
  // A batch that still waits on its client once its calls ran can never finish (its client sends nothing
  // more): answer rather than hold the request until the runtime cancels it as hung, with a 500.
  const timer = Promise.withResolvers<false>();
  const timeout = setTimeout(() => timer.resolve(false), RPC_LIMITS.batchMillis);
  const drained = await Promise.race([session.drain().then(() => true), timer.promise]);
  clearTimeout(timeout);
  if (!drained) return errorResponse(refusal("rpcBatchStuck"));
  return new Response(transport.body(), { headers: { "Content-Type": "text/plain; charset=utf-8" } });
});

rpcRoutes.get("/:token/rpc", async (c) => {
  const token = c.req.param("token");
  const live = await liveCap(c, token);
  if (!live.ok) return errorResponse(live.error);
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return errorResponse(refusal("rpcNeedsUpgrade"));
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  server.accept();
  const budget = new RpcSessionBudget("live");
  const target = new CapTarget(live.value.cap, token, { env: c.env, origin: publicOrigin(c), budget }, true);
  const transport = new ClosingTransport(server);
  new RpcSession(transport, target, SESSION_OPTIONS);
  budget.whenMainDies(() => transport.closeAfterNextAnswer());
  budget.whenFlooding(() => transport.closeFlooded());
  server.addEventListener("close", () => budget.end());
  server.addEventListener("error", () => budget.end());
  return new Response(null, { status: 101, webSocket: client });
});
