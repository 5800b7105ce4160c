import { Hono } from "hono";
import { type AppEnv, type CapStub, capStub, publicOrigin } from "../cap-stub.ts";
import { errorResponse } from "../http-error.ts";
import { readJsonBody } from "../json-body.ts";
import { capFiles, rootedFiles } from "./cap-files.ts";
import { knownRights, rememberRights } from "./known-rights.ts";
import { claimsModernEra } from "./mcp-era.ts";
import { answerListen, isListenRequest } from "./mcp-listen.ts";
import { answerPost, jsonRpcError } from "./mcp-post.ts";
import { sharedCapServer } from "./mcp-server.ts";
import { answerSessionStream, runWithSession, withNewSession } from "./mcp-subscriptions.ts";
import { foreignOriginRefused } from "./origin-check.ts";
import { budgetedFiles, MAX_BATCH_MESSAGES, RequestBudget } from "./request-budget.ts";
import { runInScope } from "./request-scope.ts";

/** The MCP SDK's own default limit, kept: a write_file carries a whole file. */
const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/**
 * `/object/<token>/mcp`: MCP over Streamable HTTP, stateless. Each POST is
 * answered, in JSON, by the isolate's server for the cap's rights, its calls
 * running in a scope of their own (the cap, a fresh budget). The one state is
 * a 2025-era session's resource subscriptions, streamed on its GET
 * (mcp-subscriptions.ts); 2026's `subscriptions/listen` is one POST's stream
 * (mcp-listen.ts). DELETE is 405. An unknown or revoked token is the usual
 * 404 `no_such_cap`, whatever the request.
 */
export const mcpRoutes = new Hono<AppEnv>();

mcpRoutes.use("/:token/mcp", foreignOriginRefused);

mcpRoutes.all("/:token/mcp", async (c) => {
  const stub = await capStub(c, c.req.param("token"));
  if (!stub.ok) return errorResponse(stub.error);
  const cap = stub.value;
  // A cap's rights are fixed when it is minted; whether it is alive is not.
  // Tool calls on a cap whose rights are known skip asking first: every tool
  // call reaches the cap, which refuses it when dead, and any refusal below
  // asks then. Anything else asks first, as every route does.
  let rights = c.req.method === "POST" ? knownRights(c.get("capId")!) : undefined;
  const askedFirst = rights === undefined;
  if (!rights) {
    const info = await cap.describe();
    if (!info.ok) return errorResponse(info.error);
    rights = rememberRights(c.get("capId")!, info.value.rights);
  }
  // A session's stream of resource notifications (mcp-subscriptions.ts).
  if (c.req.method === "GET") return answerSessionStream(c.req.raw, cap, c.get("capId")!);
  if (c.req.method !== "POST")
    return jsonRpcError(405, -32000, "Method not allowed: this stateless server only answers POST.", { Allow: "POST" });
  // The body is read here, not by the transport, to refuse an oversized batch before any of it runs.
  const body = await readJsonBody(c.req.raw, MAX_MCP_BODY_BYTES);
  if (!body.ok) {
    return unlessDead(
      cap,
      !askedFirst,
      body.error.code === "too_large"
        ? jsonRpcError(413, -32000, body.error.message)
        : jsonRpcError(400, -32700, `Parse error: ${body.error.message}`),
    );
  }
  const messages = Array.isArray(body.value) ? body.value : [body.value];
  if (messages.length > MAX_BATCH_MESSAGES) {
    return unlessDead(
      cap,
      !askedFirst,
      jsonRpcError(400, -32600, `Invalid Request: a batch holds at most ${MAX_BATCH_MESSAGES} messages`),
    );
  }
  // 2026-07-28 requests (the per-request _meta envelope) go to the SDK v2's handler; the rest are 2025-era.
  const era = claimsModernEra(c.req.raw, body.value) ? await import("./mcp-modern.ts") : null;
  const modern = era !== null && (await era.isModernRequest(c.req.raw, body.value));
  // Only tool calls prove the cap alive by reaching it; anything else asks now.
  if (!askedFirst && (modern || !messages.every(isToolCall))) {
    const info = await cap.describe();
    if (!info.ok) return errorResponse(info.error);
  }
  const budget = new RequestBudget();
  const files = budgetedFiles(rootedFiles(capFiles(cap, c.env)), budget);
  const context = { cap, files, budget, origin: publicOrigin(c), env: c.env };
  if (modern && isListenRequest(body.value)) return answerListen(c.req.raw, body.value, cap, c.get("capId")!, rights);
  if (era && modern) {
    const handler = era.modernCapHandler(rights);
    return runInScope({ context, budget }, () => handler.fetch(c.req.raw, { parsedBody: body.value }));
  }
  const answer = await runWithSession(c.req.raw, () =>
    runInScope({ context, budget }, () => answerPost(c.req.raw, body.value, sharedCapServer(rights))),
  );
  withNewSession(body.value, rights, answer.response);
  // Every call succeeded, so each found the cap alive: the answer stands. A
  // refusal may come from a cap revoked before or while the calls ran: then
  // answer like every other route for a dead cap.
  return answer.succeeded ? answer.response : unlessDead(cap, true, answer.response);
});

const isToolCall = (message: unknown) =>
  typeof message === "object" && message !== null && (message as { method?: unknown }).method === "tools/call";

/** `response`, or (when `ask`) `no_such_cap` if the cap is dead by now. */
async function unlessDead(cap: CapStub, ask: boolean, response: Response): Promise<Response> {
  if (!ask) return response;
  const still = await cap.describe();
  if (still.ok) return response;
  await response.body?.cancel().catch(() => undefined);
  return errorResponse(still.error);
}
