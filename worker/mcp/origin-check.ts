import type { MiddlewareHandler } from "hono";
import { refusal } from "../../shared/refusals.ts";
import type { AppEnv } from "../cap-stub.ts";
import { errorResponse } from "../http-error.ts";

/**
 * Whether a request's `Origin` may reach MCP. A page a browser shows can post
 * to any URL it knows, and DNS rebinding makes a local vault look same-site
 * to it: MCP's transport says servers MUST validate `Origin` (403 otherwise).
 * Allowed: no `Origin` (not a browser), the vault's own public origin, and
 * loopback origins (local clients such as an inspector on localhost).
 */
export function originAllowed(origin: string | null, publicUrl: string | undefined): boolean {
  if (origin === null) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  // "null" (sandboxed frames, file: pages) and anything with a path is not an origin a client we serve sends.
  if ((url.protocol !== "http:" && url.protocol !== "https:") || url.origin !== origin.replace(/\/$/, "")) return false;
  if (publicUrl && sameOrigin(url, publicUrl)) return true;
  return isLoopback(url.hostname);
}

function sameOrigin(url: URL, publicUrl: string): boolean {
  try {
    return new URL(publicUrl).origin === url.origin;
  } catch {
    return false;
  }
}

/** `localhost`, `*.localhost`, 127.0.0.0/8 and ::1: names no other machine can answer for. */
function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Refuses a request from a foreign `Origin` before its token or body is looked at. */
export const foreignOriginRefused: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!originAllowed(c.req.header("origin") ?? null, c.env.CAPVAULT_PUBLIC_URL)) {
    return errorResponse(refusal("foreignOrigin"));
  }
  await next();
};
