import { Hono } from "hono";
import { refusal } from "../shared/refusals.ts";
import { adminRoutes } from "./admin-routes.ts";
import { capFromHeader } from "./cap-header-routes.ts";
import type { AppEnv } from "./cap-stub.ts";
import { consoleRoutes } from "./console/console-routes.ts";
import { davRoutes } from "./dav/dav-routes.ts";
import { errorResponse } from "./http-error.ts";
import { jsonResponse } from "./json-response.ts";
import { oauthRoutes } from "./oauth/oauth-routes.ts";
import { objectRoutes } from "./object-routes.ts";
import { requestLog } from "./request-log.ts";
import { securityHeaders } from "./security-headers.ts";
import { settleUnreadBody } from "./settle-unread-body.ts";

/**
 * The capvault HTTP surface: routing and HTTP mapping only.
 *
 * @example
 * // wrangler.toml: main = "worker/index.ts"
 * export default app;
 */
export const app = new Hono<AppEnv>();

app.use("*", requestLog, securityHeaders, settleUnreadBody);
app.get("/", () =>
  jsonResponse({ name: "capvault", about: "a durable capability vault; hold a cap URL /object/<token>" }),
);
app.route("/", davRoutes);
app.route("/object", objectRoutes);
// The same routes with the token in `Authorization` instead of the URL (worker/cap-header-routes.ts).
const viaHeader = capFromHeader((request, c) => app.fetch(request, c.env, c.executionCtx));
app.all("/cap", viaHeader);
app.all("/cap/*", viaHeader);
app.route("/admin", adminRoutes);
// OAuth 2.1 for remote MCP clients: grants are child caps, and `/mcp` serves the one a token stands for.
app.route(
  "/",
  oauthRoutes((request, c) => app.fetch(request, c.env, c.executionCtx)),
);
app.route("/ui", consoleRoutes);
app.notFound(() => errorResponse(refusal("noSuchRoute")));
// Unexpected failures never echo their message: it could name a key or path.
app.onError((err) => {
  console.error(`unhandled ${err instanceof Error ? err.name : "error"}`);
  return errorResponse(refusal("unavailable"));
});
