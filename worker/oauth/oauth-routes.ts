import { type Context, Hono } from "hono";
import type { OAuthRegistry } from "../../durable-objects/oauth-registry.ts";
import { refusal } from "../../shared/refusals.ts";
import type { MintedCap } from "../../shared/wire-types.ts";
import { type AppEnv, publicOrigin, requirePublicOrigin } from "../cap-stub.ts";
import { readJsonBody, readTextBody } from "../json-body.ts";
import { type AuthorizationRequest, consentPage, errorPage, LIFETIMES } from "./consent-page.ts";
import { type OAuthParam, type OAuthRefusal, oauthAnswer, oauthError } from "./oauth-errors.ts";
import { newId, newSecret, s256, seal, secretDigest, unseal } from "./oauth-secrets.ts";

/** Serves a rewritten request through the vault's own routes (and so their gates, limits and refusals). */
export type Dispatch = (request: Request, c: Context<AppEnv>) => Response | Promise<Response>;

/** A code is exchanged within seconds of consent; one unused for this long is dead. */
export const CODE_TTL_MS = 60_000;
/** Access tokens are short-lived; refresh tokens live as long as the grant's cap. */
export const ACCESS_TTL_MS = 3600_000;
const REGISTER_BODY_BYTES = 16 * 1024;
const FORM_BODY_BYTES = 16 * 1024;
const QUERY_BYTES = 8 * 1024;
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_STATE_LENGTH = 1024;
const MAX_CLIENT_NAME = 100;
/** RFC 7636 §4.1: 43 to 128 unreserved characters (a challenge has the same alphabet). */
const PKCE_SHAPE = /^[A-Za-z0-9._~-]{43,128}$/;
const CAP_TOKEN = /^[a-z2-7]{48}$/;
const CONTROL = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/u;

/** The registry's binding (wrangler.toml `OAUTH`), the authorization server's alone. */
interface OAuthEnv {
  OAUTH: DurableObjectNamespace<OAuthRegistry>;
}

const registry = (c: Context<AppEnv>): DurableObjectStub<OAuthRegistry> => {
  const ns = (c.env as unknown as OAuthEnv).OAUTH;
  return ns.get(ns.idFromName("oauth"));
};

/** The one resource tokens are issued for (RFC 8707): this vault's tokenless MCP endpoint. */
export const mcpResource = (c: Context<AppEnv>) => `${publicOrigin(c)}/mcp`;

/** Exactly one value of `name`, `null` when absent; `undefined` when repeated (RFC 6749 §3.1). */
function single(params: URLSearchParams, name: string): string | null | undefined {
  const all = params.getAll(name);
  if (all.length > 1) return undefined;
  return all[0] ?? null;
}

/** https anywhere, or http on a loopback host (RFC 8252 §7.3); never a fragment, userinfo or other scheme. */
export function acceptableRedirectUri(value: unknown): value is string {
  if (typeof value !== "string" || value.length > MAX_URI_LENGTH || CONTROL.test(value)) return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash !== "" || value.includes("#") || url.username !== "" || url.password !== "") return false;
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname);
}

async function readForm(request: Request): Promise<URLSearchParams | OAuthRefusal> {
  const type = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
  const text = await readTextBody(request, FORM_BODY_BYTES);
  if (!text.ok) return { reason: text.error.code === "too_large" ? "body_too_large" : "malformed_body" };
  if (type !== "application/x-www-form-urlencoded" || text.value === null) return { reason: "malformed_body" };
  return new URLSearchParams(text.value);
}

const isRefusal = (v: unknown): v is OAuthRefusal => typeof v === "object" && v !== null && "reason" in v;

export function oauthRoutes(dispatch: Dispatch) {
  const routes = new Hono<AppEnv>();
  for (const path of ["/.well-known/*", "/oauth/*", "/mcp"]) routes.use(path, requirePublicOrigin);

  /** RFC 9728 protected-resource metadata, at the path the 401 names and at the root form. */
  const resourceMetadata = (c: Context<AppEnv>) =>
    c.json({
      resource: mcpResource(c),
      authorization_servers: [publicOrigin(c)],
      bearer_methods_supported: ["header"],
      resource_name: "capvault",
    });
  routes.get("/.well-known/oauth-protected-resource/mcp", resourceMetadata);
  routes.get("/.well-known/oauth-protected-resource", resourceMetadata);

  /** RFC 8414 authorization-server metadata. */
  routes.get("/.well-known/oauth-authorization-server", (c) => {
    const origin = publicOrigin(c);
    return c.json({
      issuer: origin,
      authorization_endpoint: `${origin}/oauth/authorize`,
      token_endpoint: `${origin}/oauth/token`,
      registration_endpoint: `${origin}/oauth/register`,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: false,
    });
  });

  /** RFC 7591 dynamic registration: public clients only (PKCE is their proof), every one answered `none`. */
  routes.post("/oauth/register", async (c) => {
    const body = await readJsonBody(c.req.raw, REGISTER_BODY_BYTES);
    if (!body.ok) return oauthError({ reason: body.error.code === "too_large" ? "body_too_large" : "malformed_body" });
    const m = body.value as Record<string, unknown>;
    if (typeof m !== "object" || m === null || Array.isArray(m)) return oauthError({ reason: "malformed_body" });
    const uris = m.redirect_uris;
    if (
      !Array.isArray(uris) ||
      uris.length === 0 ||
      uris.length > MAX_REDIRECT_URIS ||
      !uris.every(acceptableRedirectUri)
    ) {
      return oauthError({ reason: "bad_redirect_uris" });
    }
    const name = m.client_name ?? "unnamed client";
    if (typeof name !== "string" || name.length === 0 || name.length > MAX_CLIENT_NAME || CONTROL.test(name)) {
      return oauthError({ reason: "bad_metadata", field: "client_name" });
    }
    const grants = m.grant_types ?? ["authorization_code"];
    if (!Array.isArray(grants) || !grants.every((g) => g === "authorization_code" || g === "refresh_token")) {
      return oauthError({ reason: "bad_metadata", field: "grant_types" });
    }
    const responses = m.response_types ?? ["code"];
    if (!Array.isArray(responses) || !responses.every((r) => r === "code")) {
      return oauthError({ reason: "bad_metadata", field: "response_types" });
    }
    const clientId = newId();
    const now = Date.now();
    const outcome = await registry(c).register(clientId, { name, redirectUris: uris, createdAt: now }, now);
    if (outcome.kind === "full") return oauthError({ reason: "registration_full" });
    if (outcome.kind === "busy") return oauthError({ reason: "registration_busy" }, { "Retry-After": "60" });
    return c.json(
      {
        client_id: clientId,
        client_id_issued_at: Math.floor(now / 1000),
        client_name: name,
        redirect_uris: uris,
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
      },
      201,
    );
  });

  /**
   * Checks an authorization request (query or form). Before the client and
   * its redirect URI are known good nothing is redirected (an open redirect
   * otherwise): those refusals are a page. Later ones go back to the client.
   */
  async function checkAuthorization(
    c: Context<AppEnv>,
    params: URLSearchParams,
  ): Promise<
    | { kind: "page"; response: Response }
    | { kind: "redirect"; response: Response }
    | { kind: "ok"; request: AuthorizationRequest; client: { name: string } }
  > {
    const clientId = single(params, "client_id");
    const client = typeof clientId === "string" && clientId.length <= 64 ? await registry(c).client(clientId) : null;
    if (!client || !clientId) return { kind: "page", response: await errorPage("No such client is registered here.") };
    const redirectUri =
      single(params, "redirect_uri") ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : null);
    if (typeof redirectUri !== "string" || !client.redirectUris.includes(redirectUri)) {
      return { kind: "page", response: await errorPage("The redirect_uri is not one this client registered.") };
    }
    const state = single(params, "state");
    const back = (r: OAuthRefusal) => ({
      kind: "redirect" as const,
      response: redirectBack(c, redirectUri, state ?? null, r),
    });
    if (state === undefined || (state !== null && state.length > MAX_STATE_LENGTH)) {
      return back({ reason: "missing_param", param: "state" });
    }
    if (single(params, "response_type") !== "code") return back({ reason: "unsupported_response_type" });
    const challenge = single(params, "code_challenge");
    if (
      single(params, "code_challenge_method") !== "S256" ||
      typeof challenge !== "string" ||
      !PKCE_SHAPE.test(challenge)
    ) {
      return back({ reason: "pkce_required" });
    }
    const resource = single(params, "resource");
    if (resource === undefined || (resource !== null && resource !== mcpResource(c))) {
      return back({ reason: "wrong_resource" });
    }
    return {
      kind: "ok",
      client,
      request: { clientId, redirectUri, codeChallenge: challenge, state, resource: mcpResource(c) },
    };
  }

  /** The redirect back to the client: `error` or `code`, with `state` and `iss` (RFC 9207). */
  function redirectBack(
    c: Context<AppEnv>,
    redirectUri: string,
    state: string | null,
    answer: OAuthRefusal | { code: string },
  ): Response {
    const url = new URL(redirectUri);
    if ("code" in answer) url.searchParams.set("code", answer.code);
    else url.searchParams.set("error", oauthAnswer(answer).error);
    if (state !== null) url.searchParams.set("state", state);
    url.searchParams.set("iss", publicOrigin(c));
    return new Response(null, { status: 302, headers: { Location: url.href, "Cache-Control": "no-store" } });
  }

  routes.get("/oauth/authorize", async (c) => {
    const query = new URL(c.req.url).search.slice(1);
    if (query.length > QUERY_BYTES) return errorPage("The request is too large.", 413);
    const checked = await checkAuthorization(c, new URLSearchParams(query));
    if (checked.kind !== "ok") return checked.response;
    return consentPage(checked.request, checked.client);
  });

  /** The person's answer: a deny goes back as `access_denied`; an approval mints the child cap, then a code. */
  routes.post("/oauth/authorize", async (c) => {
    const form = await readForm(c.req.raw);
    if (isRefusal(form)) return errorPage("The form could not be read.", form.reason === "body_too_large" ? 413 : 400);
    const checked = await checkAuthorization(c, form);
    if (checked.kind !== "ok") return checked.response;
    const { request, client } = checked;
    const decision = single(form, "decision");
    if (decision !== "approve") return redirectBack(c, request.redirectUri, request.state, { reason: "access_denied" });
    const again = (message: string, status: number) => consentPage(request, client, { message, status });

    const token = capToken(single(form, "cap"));
    const ttl = Number(single(form, "ttl"));
    if (!LIFETIMES.some((l) => l.seconds === ttl)) return again("Choose one of the lifetimes offered.", 400);
    const path = single(form, "path") ?? "";
    const rights = form.getAll("rights");
    if (!token) return again(refusal("noSuchCap").message, 404);
    // Minted through the cap's own route: its holder gate, its rights and its refusals decide.
    const origin = new URL(c.req.url).origin;
    const minted = await dispatch(
      new Request(`${origin}/object/${token}/subdir`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ path, rights, ttlSeconds: ttl, label: `OAuth: ${client.name} (unverified client)` }),
      }),
      c,
    );
    if (minted.status !== 201) {
      const failure = (await minted.json().catch(() => null)) as { error?: { message?: string } } | null;
      return again(failure?.error?.message ?? refusal("unavailable").message, minted.status);
    }
    const child = (await minted.json()) as MintedCap;
    const code = newSecret("cvc");
    const now = Date.now();
    await registry(c).putCode(await secretDigest(code), {
      clientId: request.clientId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      childId: child.id,
      sealed: await seal(code, child.token),
      expiresAt: now + CODE_TTL_MS,
      grantExpiresAt: child.expiresAt === null ? null : Date.parse(child.expiresAt),
    });
    return redirectBack(c, request.redirectUri, request.state, { code });
  });

  /** Revokes a grant's child cap through its own route, so the delegation tree shows it gone. */
  async function revokeChild(c: Context<AppEnv>, childToken: string): Promise<void> {
    const revoked = await dispatch(
      new Request(`${new URL(c.req.url).origin}/object/${childToken}`, { method: "DELETE" }),
      c,
    );
    await revoked.body?.cancel();
  }

  async function issue(
    c: Context<AppEnv>,
    clientId: string,
    childId: string,
    childToken: string,
    grantEnd: number | null,
  ) {
    const now = Date.now();
    const access = newSecret("cva");
    const refresh = newSecret("cvr");
    const accessEnd = grantEnd === null ? now + ACCESS_TTL_MS : Math.min(grantEnd, now + ACCESS_TTL_MS);
    const grantId = newId();
    const base = { grantId, clientId, resource: mcpResource(c), childId };
    const tokens = {
      grantId,
      accessDigest: await secretDigest(access),
      access: { ...base, sealed: await seal(access, childToken), expiresAt: accessEnd },
      refreshDigest: await secretDigest(refresh),
      refresh: { ...base, sealed: await seal(refresh, childToken), expiresAt: grantEnd },
    };
    const answer = {
      access_token: access,
      token_type: "Bearer",
      expires_in: Math.max(1, Math.floor((accessEnd - now) / 1000)),
      refresh_token: refresh,
    };
    return { tokens, answer };
  }

  const tokenAnswer = (answer: object) =>
    Response.json(answer, { headers: { "Cache-Control": "no-store", Pragma: "no-cache" } });

  routes.post("/oauth/token", async (c) => {
    const form = await readForm(c.req.raw);
    if (isRefusal(form)) return oauthError(form);
    const get = (name: OAuthParam): string | OAuthRefusal => {
      const v = single(form, name);
      return typeof v === "string" && v.length > 0 && v.length <= 4096 ? v : { reason: "missing_param", param: name };
    };
    const grantType = single(form, "grant_type");
    if (grantType !== "authorization_code" && grantType !== "refresh_token")
      return oauthError({ reason: "unsupported_grant_type" });
    const clientId = get("client_id");
    if (isRefusal(clientId)) return oauthError(clientId);
    const reg = registry(c);
    if (!(await reg.client(clientId))) return oauthError({ reason: "unknown_client" });
    const resource = single(form, "resource");
    if (resource === undefined) return oauthError({ reason: "missing_param", param: "resource" });
    if (resource !== null && resource !== mcpResource(c)) return oauthError({ reason: "wrong_resource" });

    if (grantType === "authorization_code") {
      const code = get("code");
      if (isRefusal(code)) return oauthError(code);
      const digest = await secretDigest(code);
      const taken = await reg.takeCode(digest, Date.now());
      if (!taken) return oauthError({ reason: "bad_code" });
      const record = taken.record;
      const childToken = await unseal(code, record.sealed);
      // From here the code is spent: any failure also revokes the cap consent minted, which nothing else could ever reach.
      const spent = async (r: OAuthRefusal) => {
        if (childToken) await revokeChild(c, childToken);
        if (taken.kind === "replayed" && record.grantId) await reg.endGrant(record.grantId);
        return oauthError(r);
      };
      if (taken.kind !== "fresh" || !childToken || record.expiresAt <= Date.now()) return spent({ reason: "bad_code" });
      if (record.clientId !== clientId || single(form, "redirect_uri") !== record.redirectUri)
        return spent({ reason: "bad_code" });
      const verifier = single(form, "code_verifier");
      if (
        typeof verifier !== "string" ||
        !PKCE_SHAPE.test(verifier) ||
        (await s256(verifier)) !== record.codeChallenge
      ) {
        return spent({ reason: "pkce_mismatch" });
      }
      const { tokens, answer } = await issue(c, clientId, record.childId, childToken, record.grantExpiresAt);
      await reg.issue(tokens, digest);
      return tokenAnswer(answer);
    }

    const refresh = get("refresh_token");
    if (isRefusal(refresh)) return oauthError(refresh);
    const digest = await secretDigest(refresh);
    const record = await reg.peekRefresh(digest, Date.now());
    const childToken = record ? await unseal(refresh, record.sealed) : null;
    if (!record || !childToken || record.clientId !== clientId) return oauthError({ reason: "bad_refresh" });
    // A grant lives exactly as long as its cap: revoked there (or any ancestor), the refresh fails too.
    const alive = await dispatch(new Request(`${new URL(c.req.url).origin}/object/${childToken}`), c);
    await alive.body?.cancel();
    if (alive.status !== 200) {
      await reg.endGrant(record.grantId);
      return oauthError({ reason: "grant_ended" });
    }
    const { tokens, answer } = await issue(c, clientId, record.childId, childToken, record.expiresAt);
    const outcome = await reg.rotate(digest, clientId, tokens, Date.now());
    if (outcome.kind === "reused") {
      await revokeChild(c, childToken);
      return oauthError({ reason: "bad_refresh" });
    }
    if (outcome.kind !== "rotated") return oauthError({ reason: "bad_refresh" });
    return tokenAnswer(answer);
  });

  /**
   * The tokenless MCP endpoint: `Authorization: Bearer <access token>`, served
   * by the cap-in-path endpoint of the child cap the token stands for.
   */
  routes.all("/mcp", async (c) => {
    const metadata = `${publicOrigin(c)}/.well-known/oauth-protected-resource/mcp`;
    const challenge = (error?: string) => `Bearer resource_metadata="${metadata}"${error ? `, error="${error}"` : ""}`;
    const header = c.req.header("authorization") ?? "";
    const m = /^bearer (cva_[A-Za-z0-9_-]{43})$/i.exec(header);
    if (!m) {
      await c.req.raw.body?.cancel();
      if (header === "") {
        return new Response(null, { status: 401, headers: { "WWW-Authenticate": challenge() } });
      }
      return oauthError({ reason: "invalid_token" }, { "WWW-Authenticate": challenge("invalid_token") });
    }
    const access = m[1]!;
    const record = await registry(c).access(await secretDigest(access), Date.now());
    const childToken = record && record.resource === mcpResource(c) ? await unseal(access, record.sealed) : null;
    if (!childToken) {
      await c.req.raw.body?.cancel();
      return oauthError({ reason: "invalid_token" }, { "WWW-Authenticate": challenge("invalid_token") });
    }
    const rewritten = new Request(`${new URL(c.req.url).origin}/object/${childToken}/mcp`, c.req.raw);
    rewritten.headers.delete("authorization");
    const response = await dispatch(rewritten, c);
    // The cap-in-path endpoint answers a dead cap 404; to an OAuth client that is a dead token.
    if (response.status === 404) {
      await response.body?.cancel();
      return oauthError({ reason: "invalid_token" }, { "WWW-Authenticate": challenge("invalid_token") });
    }
    return response;
  });

  return routes;
}

/** The cap token in what the person pasted: a token, a cap URL, or a console URL (`/ui#<token>`). */
function capToken(value: string | null | undefined): string | null {
  const text = (value ?? "").trim();
  if (CAP_TOKEN.test(text)) return text;
  const m = /(?:\/object\/|#)([a-z2-7]{48})(?:[/?#]|$)/.exec(text);
  return m ? m[1]! : null;
}
