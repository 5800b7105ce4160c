import type { MiddlewareHandler } from "hono";

const TOKEN_IN_PATH = /\/object\/[^/]+/;

/**
 * One line per request, with the cap token replaced by its public id and no
 * query string (paths are data, and data stays out of logs).
 */
export const requestLog: MiddlewareHandler<{ Variables: { capId?: string } }> = async (c, next) => {
  const started = Date.now();
  await next();
  const route = new URL(c.req.url).pathname.replace(TOKEN_IN_PATH, `/object/{${c.get("capId") ?? "cap"}}`);
  console.log(`${c.req.method} ${route} ${c.res.status} ${Date.now() - started}ms`);
};
