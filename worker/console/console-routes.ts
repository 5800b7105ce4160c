import { Hono } from "hono";
import { CONSOLE_CSS } from "./console-css.ts";
import { CONSOLE_PAGE } from "./console-page.ts";
import { CONSOLE_SCRIPT, CONSOLE_SCRIPT_HASH } from "./console-script.generated.ts";

/**
 * The console's policy. Script only the console's own, admitted by its hash:
 * 'self' would also run any cap's `.js` file, served from this origin, if
 * markup were ever injected into the page. Style only from this origin (no
 * inline script, nothing third-party); fetches only to this origin's API;
 * images only from blob: URLs the script made from bytes it fetched, so a
 * previewed SVG is an image, never a document; no framing, no forms posted
 * elsewhere, no <base> rewriting where those files come from.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  `script-src '${CONSOLE_SCRIPT_HASH}'`,
  "style-src 'self'",
  "connect-src 'self'",
  "img-src blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/**
 * `/ui`: the web console, one static page and its two files. The page holds no
 * token: the cap's token travels in the URL fragment (`/ui#<token>`), which a
 * browser never sends to a server or in a Referer, and the script sends it
 * only in the API calls it makes.
 */
export const consoleRoutes = new Hono();

const asset = (body: string, type: string) => () =>
  new Response(body, { headers: { "Content-Type": type, "Content-Security-Policy": CONSOLE_CSP } });

consoleRoutes.get("/", asset(CONSOLE_PAGE, "text/html; charset=utf-8"));
consoleRoutes.get("/console.js", asset(CONSOLE_SCRIPT, "text/javascript; charset=utf-8"));
consoleRoutes.get("/console.css", asset(CONSOLE_CSS, "text/css; charset=utf-8"));
