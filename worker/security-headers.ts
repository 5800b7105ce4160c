import type { MiddlewareHandler } from "hono";

/**
 * Cap URLs are bearer secrets. `no-referrer` keeps them out of Referer when a
 * served page links elsewhere, `no-store` keeps them out of shared caches, and
 * files are served sandboxed so an HTML file in the vault cannot run script on
 * the vault's origin (and read other caps from there). The one exception is
 * the console's own page and files (worker/console/), which set a strict
 * policy of their own that lets that page's script, and nothing else, run.
 */
export const securityHeaders: MiddlewareHandler = async (c, next) => {
  await next();
  const h = c.res.headers;
  h.set("Referrer-Policy", "no-referrer");
  h.set("Cache-Control", h.get("Cache-Control") ?? "no-store");
  h.set("X-Content-Type-Options", "nosniff");
  if (!h.has("Content-Security-Policy")) h.set("Content-Security-Policy", "sandbox; default-src 'none'");
};
