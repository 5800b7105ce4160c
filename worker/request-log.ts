import type { MiddlewareHandler } from "hono";

/**
 * One line per request: method, the route pattern that matched (never the
 * raw URL, which carries the token even when no route matched, and never the
 * query, where paths travel), the cap's public id, status and time.
 */
export const requestLog: MiddlewareHandler<{ Variables: { capId?: string } }> = async (c, next) => {
  const started = Date.now();
  await next();
  const pattern = c.req.routePath;
  const route =
    pattern === "/*" || pattern === "*" ? "(no route)" : pattern.replace(":token", `{${c.get("capId") ?? "cap"}}`);
  console.log(`${c.req.method} ${route} ${c.res.status} ${Date.now() - started}ms`);
};
