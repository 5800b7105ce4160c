/**
 * A JSON answer of the HTTP API, ending in a newline: a body printed by
 * `curl` then ends its line, and the next prompt or status starts a line of
 * its own. Every REST route answers through this (`Response.json` does not
 * add one), so equal refusals stay byte-identical.
 *
 * @example
 * return jsonResponse({ from, to }, { status: 200 });
 */
export function jsonResponse(value: unknown, init: ResponseInit = {}): Response {
  const headers = new Headers(init.headers);
  headers.set("Content-Type", "application/json");
  return new Response(`${JSON.stringify(value)}\n`, { ...init, headers });
}
