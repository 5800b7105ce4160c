import { parseCapUrl } from "../../clients/typescript/cap-url.ts";
import type { HolderKey } from "../../clients/typescript/holder.ts";
import type { FetchLike } from "../../clients/typescript/types.ts";
import { VaultTransport } from "../../clients/typescript/vault-transport.ts";
import {
  errorForEach,
  isAnonymousError,
  isJsonRpc,
  type MessageShape,
  RPC,
  type RpcError,
  shapeOf,
} from "./json-rpc.ts";

/** What one message from the client came to: the answer to write back (if any) and a line for stderr (if any). */
export interface Forwarded {
  answer?: unknown;
  log?: string;
}

/**
 * The cap's MCP endpoint (`<cap>/mcp`, Streamable HTTP, stateless, JSON
 * answers), reached one message per POST. Every request the client sends gets
 * exactly one answer under its own id, whatever happens on the way: a client
 * waiting on an id nobody will answer hangs forever. So a refusal of the
 * whole POST (the HTTP layer answers with id null), a vault refusal in the
 * vault's own shape (`{"error":{"code":"no_such_cap",…}}` once the cap is
 * revoked), and an unreachable vault all become JSON-RPC errors for the ids
 * sent. Messages never quote the cap URL: the token is scrubbed.
 */
export class CapEndpoint {
  readonly #url: string;
  readonly #http: VaultTransport;
  readonly #fetch: FetchLike;
  /** For a holder-bound cap: each POST carries a DPoP proof by this key (htu the endpoint, content_digest the line). */
  readonly #holder: { key: HolderKey; token: string } | undefined;
  /** Negotiated by initialize; Streamable HTTP wants it on every later POST. */
  #protocolVersion: string | undefined;

  constructor(capUrl: string, fetchImpl?: FetchLike, holder?: HolderKey) {
    const { mount, token } = parseCapUrl(capUrl);
    this.#holder = holder && { key: holder, token };
    this.#url = `${mount}/object/${token}/mcp`;
    this.#http = new VaultTransport(fetchImpl, [token]);
    this.#fetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** Sends one line the client wrote (already known to be JSON, parsed as `message`). */
  async forward(line: string, message: unknown): Promise<Forwarded> {
    const shape = shapeOf(message);
    const headers: Record<string, string> = {
      accept: "application/json, text/event-stream",
      "content-type": "application/json",
    };
    if (this.#protocolVersion && !shape.initialize) headers["mcp-protocol-version"] = this.#protocolVersion;
    let response: Response;
    try {
      if (this.#holder) {
        const { key, token } = this.#holder;
        const body = new TextEncoder().encode(line);
        headers.dpop = await key.proof({ method: "POST", url: this.#url, token, body });
      }
      response = await this.#fetch(this.#url, { method: "POST", headers, body: line });
    } catch (cause) {
      const why = this.#http.redact(describe(cause));
      return errorAnswer(shape, {
        code: RPC.unreachable,
        message: `vault unreachable: ${why}`,
        data: { code: "unavailable" },
      });
    }
    if (response.status === 202) {
      await response.body?.cancel().catch(() => undefined);
      return {};
    }
    // The endpoint answers in JSON only (it keeps no streams); anything else is not the endpoint.
    const isJson = (response.headers.get("content-type") ?? "").includes("json");
    if (!isJson) await response.body?.cancel().catch(() => undefined);
    const text = isJson ? await response.text().catch(() => "") : "";
    const body = parse(text);
    if (isAnonymousError(body)) {
      // Refused whole: each request hears it under its id; a message with no request id in it was itself
      // malformed (a valid notification gets 202), and JSON-RPC answers that with id null, as the endpoint did.
      return shape.requestIds.length > 0 ? errorAnswer(shape, body.error) : { answer: body };
    }
    if (isJsonRpc(body)) {
      if (response.ok && shape.initialize) this.#remember(body);
      return { answer: body };
    }
    // Not JSON-RPC: the vault's own refusal (or a proxy's page), read as the SDK reads it.
    const error = await this.#http.errorFrom(new Response(text, { status: response.status }));
    return errorAnswer(shape, {
      code: RPC.vaultRefused,
      message: `${error.code}: ${error.message}`,
      data: { code: error.code, status: error.status },
    });
  }

  #remember(answer: unknown): void {
    const version = (answer as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
    if (typeof version === "string") this.#protocolVersion = version;
  }
}

/** `error` for each request of the message; for notifications, only a line on stderr. */
function errorAnswer(shape: MessageShape, error: RpcError): Forwarded {
  const answer = errorForEach(shape, error);
  return answer === undefined ? { log: error.message } : { answer };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  // undici says "fetch failed" and keeps the reason (ECONNREFUSED…) in `cause`.
  return cause.cause instanceof Error ? `${cause.message}: ${cause.cause.message}` : cause.message;
}
