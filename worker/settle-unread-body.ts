import type { MiddlewareHandler } from "hono";
import { settleBody } from "../shared/settle-body.ts";

/**
 * After any answer given without looking at the request's body (an unknown
 * token, an unknown route, a dead cap on the memory or MCP route), settles
 * that body before the response goes, so the client's keep-alive connection
 * survives the refusal. Bodies that reached a handler are its business.
 */
export const settleUnreadBody: MiddlewareHandler = async (c, next) => {
  await next();
  if (c.req.raw.body && !c.req.raw.bodyUsed)
    await settleBody(c.req.raw.body, declaredLength(c.req.header("content-length")));
};

/** The request's Content-Length, or null when absent or malformed. */
export function declaredLength(header: string | undefined): number | null {
  return header !== undefined && /^\d{1,16}$/.test(header) ? Number(header) : null;
}
