import { CapError } from "./cap-error.ts";
import type { HolderKey } from "./holder.ts";
import type { FetchLike } from "./types.ts";

/** One HTTP exchange with the vault, described without any URL string the caller could get wrong. */
export interface TransportRequest {
  method: "GET" | "PUT" | "POST" | "DELETE";
  /** Absolute URL without query. Contains the cap token, so it is never put in a message. */
  url: string;
  /** Sent with URLSearchParams so a path travels as data, byte for byte, never as a URL path. */
  query?: Record<string, string | number | undefined | null>;
  headers?: Record<string, string | undefined>;
  /** Serialised as JSON with `Content-Type: application/json`. */
  json?: unknown;
  body?: BodyInit;
  /** Request options fetch needs for some bodies (`duplex: "half"` for streams in Node). */
  duplex?: "half";
  signal?: AbortSignal | undefined;
  /** Statuses that are a success for this call; anything else becomes a CapError. */
  expect: readonly number[];
}

/**
 * The SDK's only HTTP client. It turns every way a call can fail into a
 * `CapError` and scrubs the secrets it was given (cap or admin token) from
 * any message, because the underlying fetch errors can quote the URL.
 */
export class VaultTransport {
  readonly #fetch: FetchLike;
  readonly #secrets: readonly string[];

  /** For a holder-bound cap: the key that signs each request's DPoP proof, and the token its `ath` names. */
  readonly #holder: { key: HolderKey; token: string } | undefined;

  constructor(
    fetchImpl: FetchLike | undefined,
    secrets: readonly string[],
    holder?: { key: HolderKey; token: string },
  ) {
    // Calling a browser's window.fetch detached from `window` throws "Illegal invocation".
    this.#fetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
    this.#secrets = secrets.filter((s) => s.length > 0);
    this.#holder = holder;
  }

  /** Replaces every secret in `text` with `…`. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.#secrets) out = out.split(secret).join("…");
    return out;
  }

  async send(request: TransportRequest): Promise<Response> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      if (value !== undefined) headers[name] = value;
    }
    let body = request.body;
    if (request.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(request.json);
    }
    const init: RequestInit & { duplex?: "half" } = { method: request.method, headers };
    if (body !== undefined) init.body = body;
    if (request.duplex) init.duplex = request.duplex;
    if (request.signal) init.signal = request.signal;

    let response: Response;
    const url = withQuery(request.url, request.query);
    // A proof is used once: the retry below signs a fresh one.
    const signed = this.#holder ? await this.#signed(request, init) : () => Promise.resolve(init);
    try {
      response = await this.#fetch(url, await signed()).catch(async (cause: unknown) => {
        // A kept-alive connection the server has just closed fails the next
        // request sent on it before it was read. A GET changes nothing, so it is
        // sent once more, on a fresh connection; anything else could have been
        // applied, and a second try could answer for the first (a create-only
        // PUT answering 412 to its own write), so it reports the failure.
        if (request.method !== "GET" || request.signal?.aborted) throw cause;
        return this.#fetch(url, await signed());
      });
    } catch (cause) {
      if (request.signal?.aborted) throw cause;
      throw new CapError("unavailable", 0, this.redact(`vault unreachable: ${describe(cause)}`));
    }
    if (request.expect.includes(response.status)) return response;
    throw await this.errorFrom(response);
  }

  /**
   * Makes `init` carry a DPoP proof (shared/holder-proof-sign.ts). The proof's
   * `content_digest` covers the body, so a body is read into memory first (a
   * bound cap's uploads are buffered by the SDK); GET and DELETE carry none.
   */
  async #signed(request: TransportRequest, init: RequestInit & { duplex?: "half" }) {
    const holder = this.#holder!;
    let bytes: Uint8Array | null = null;
    if (request.method !== "GET" && request.method !== "DELETE") {
      bytes = init.body == null ? new Uint8Array(0) : new Uint8Array(await new Response(init.body).arrayBuffer());
      init.body = bytes;
      delete init.duplex;
    }
    return async (): Promise<RequestInit> => {
      const dpop = await holder.key.proof({
        method: request.method,
        url: request.url,
        token: holder.token,
        body: bytes,
      });
      return { ...init, headers: { ...(init.headers as Record<string, string>), dpop } };
    };
  }

  /** Reads a success body as JSON; a body that is not JSON means we are not talking to a vault. */
  async json<T>(response: Response): Promise<T> {
    const text = await response.text();
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new CapError("unavailable", response.status, `malformed response from vault (HTTP ${response.status})`);
    }
  }

  async errorFrom(response: Response): Promise<CapError> {
    let text = "";
    try {
      text = await response.text();
    } catch {
      // A body that breaks mid-read is reported like any other non-vault answer below.
    }
    try {
      const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
      const code = parsed?.error?.code;
      if (typeof code === "string" && code !== "") {
        const message = typeof parsed.error?.message === "string" ? parsed.error.message : code;
        return new CapError(code, response.status, this.redact(message));
      }
    } catch {
      // Fall through: proxies and crashed workers answer with HTML or plain text.
    }
    return new CapError("unavailable", response.status, `unexpected response from vault (HTTP ${response.status})`);
  }
}

function withQuery(url: string, query: TransportRequest["query"]): string {
  if (!query) return url;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.set(name, String(value));
  }
  const text = params.toString();
  return text === "" ? url : `${url}?${text}`;
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // undici reports "fetch failed" and keeps the useful part (ECONNREFUSED…) in `cause`.
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : "";
  return `${cause.message}${inner}`;
}
