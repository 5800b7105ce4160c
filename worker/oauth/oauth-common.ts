import type { Context } from "hono";
import type { OAuthRegistry } from "../../durable-objects/oauth-registry.ts";
import { type AppEnv, publicOrigin } from "../cap-stub.ts";
import { readTextBody } from "../json-body.ts";
import type { OAuthRefusal } from "./oauth-errors.ts";

/** What the OAuth routes share: the registry, the one resource, parameter and form reading. */

/** Serves a rewritten request through the vault's own routes (and so their gates, limits and refusals). */
export type Dispatch = (request: Request, c: Context<AppEnv>) => Response | Promise<Response>;

/** A code is exchanged within seconds of consent; one unused for this long is dead. */
export const CODE_TTL_MS = 60_000;
/** Access tokens are short-lived; refresh tokens live as long as the grant's cap. */
export const ACCESS_TTL_MS = 3600_000;
/** RFC 7636 §4.1: 43 to 128 unreserved characters (a challenge has the same alphabet). */
export const PKCE_SHAPE = /^[A-Za-z0-9._~-]{43,128}$/;
export const CONTROL = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/u;
const FORM_BODY_BYTES = 16 * 1024;

/** The registry's binding (wrangler.toml `OAUTH`), the authorization server's alone. */
interface OAuthEnv {
  OAUTH: DurableObjectNamespace<OAuthRegistry>;
}

export const registry = (c: Context<AppEnv>): DurableObjectStub<OAuthRegistry> => {
  const ns = (c.env as unknown as OAuthEnv).OAUTH;
  return ns.get(ns.idFromName("oauth"));
};

/** The one resource tokens are issued for (RFC 8707): this vault's tokenless MCP endpoint. */
export const mcpResource = (c: Context<AppEnv>) => `${publicOrigin(c)}/mcp`;

/** Exactly one value of `name`, `null` when absent; `undefined` when repeated (RFC 6749 §3.1). */
export function single(params: URLSearchParams, name: string): string | null | undefined {
  const all = params.getAll(name);
  if (all.length > 1) return undefined;
  return all[0] ?? null;
}

export async function readForm(request: Request): Promise<URLSearchParams | OAuthRefusal> {
  const type = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  const text = await readTextBody(request, FORM_BODY_BYTES);
  if (!text.ok) return { reason: text.error.code === "too_large" ? "body_too_large" : "malformed_body" };
  if (type !== "application/x-www-form-urlencoded" || text.value === null) return { reason: "malformed_body" };
  return new URLSearchParams(text.value);
}

export const isRefusal = (v: unknown): v is OAuthRefusal => typeof v === "object" && v !== null && "reason" in v;
