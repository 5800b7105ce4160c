/**
 * The bench's HTTP client: `node:http` over one keep-alive agent, about 0.15 ms
 * per call on loopback. `fetch` (undici) adds 0.5–1.4 ms to every call here,
 * which hides the vault's own cost and pulls every ratio toward 1, so every
 * latency and throughput row goes through this (docs/benchmarks.md).
 */
import http from "node:http";

const agent = new http.Agent({ keepAlive: true, noDelay: true, scheduling: "lifo" });

export interface LeanResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface LeanInit {
  method?: string;
  body?: Uint8Array | string;
  headers?: Record<string, string>;
}

/** Requests sent again because a pooled connection had been closed by the server before it answered. */
export let resent = 0;

/** One exchange on a pooled connection; the whole body is read. */
function once(url: URL, init: LeanInit): Promise<{ response: LeanResponse } | { error: Error; reused: boolean }> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers["content-length"] = Buffer.byteLength(init.body);
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: init.method ?? "GET",
        headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ response: { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) } }),
        );
        res.on("error", (error) => resolve({ error, reused: false }));
      },
    );
    req.on("error", (error) => resolve({ error, reused: req.reusedSocket }));
    req.end(init.body);
  });
}

/**
 * Sends `init` to `url`, once more (up to 3 times) when a kept-alive
 * connection the server had already closed fails before any answer: what
 * browsers do for idempotent requests, and every call the bench times is one
 * (reads, and writes of the same bytes). A server that is down fails on a new
 * connection, which is not retried.
 */
export async function lean(url: string, init: LeanInit = {}): Promise<LeanResponse> {
  const target = new URL(url);
  for (let attempt = 1; ; attempt++) {
    const outcome = await once(target, init);
    if ("response" in outcome) return outcome.response;
    const code = (outcome.error as NodeJS.ErrnoException).code;
    const closedUnderUs = outcome.reused && (code === "ECONNRESET" || code === "EPIPE");
    if (!closedUnderUs || attempt === 4) throw outcome.error;
    resent++;
  }
}

/** `lean`, throwing unless the answer is 2xx: a broken path cannot pass for a fast one. */
export async function leanOk(url: string, init: LeanInit = {}): Promise<LeanResponse> {
  const res = await lean(url, init);
  if (res.status < 200 || res.status > 299)
    // The path without its token, and the vault's typed error (which never holds one).
    throw new Error(
      `${init.method ?? "GET"} ${new URL(url).pathname.replace(/\/object\/[^/]+/, "/object/…")}: HTTP ${res.status} ${res.body.toString("utf8", 0, 300)}`,
    );
  return res;
}

/**
 * A `fetch` for clients that take one (the MCP SDK's transport): POSTs go
 * through the lean client, whole; anything else (the transport's long-lived
 * GET event stream) goes to the real `fetch`, which can stream and abort.
 */
export async function leanFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  if (input instanceof Request || (init.method ?? "GET") !== "POST" || typeof init.body !== "string")
    return fetch(input, init);
  const res = await lean(String(input), {
    method: "POST",
    body: init.body,
    headers: Object.fromEntries(new Headers(init.headers)),
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  const empty = res.status === 202 || res.status === 204;
  return new Response(empty ? null : res.body, { status: res.status, headers });
}
