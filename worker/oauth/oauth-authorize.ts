import type { Context, Hono } from "hono";
import { refusal } from "../../shared/refusals.ts";
import type { MintedCap } from "../../shared/wire-types.ts";
import { type AppEnv, publicOrigin } from "../cap-stub.ts";
import { type AuthorizationRequest, consentPage, errorPage, LIFETIMES } from "./consent-page.ts";
import {
  CODE_TTL_MS,
  type Dispatch,
  isRefusal,
  mcpResource,
  PKCE_SHAPE,
  readForm,
  registry,
  single,
} from "./oauth-common.ts";
import { type OAuthRefusal, oauthAnswer } from "./oauth-errors.ts";
import { newSecret, seal, secretDigest } from "./oauth-secrets.ts";

const QUERY_BYTES = 8 * 1024;
const MAX_STATE_LENGTH = 1024;
/** A token as minted, or of the format-0 shape (32 characters), which the cap's route answers with its re-issue. */
const CAP_TOKEN = /^(?:[a-z2-7]{48}|[a-z2-7]{32})$/;

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
  const found =
    typeof clientId === "string" && clientId.length <= 64
      ? await registry(c).authorizingClient(clientId, Date.now())
      : null;
  if (found?.kind === "busy") {
    const page = await errorPage("Too many authorization requests from this client: try again in a minute.", 429);
    page.headers.set("Retry-After", "60");
    return { kind: "page", response: page };
  }
  const client = found?.kind === "ok" ? found.client : null;
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

/** The consent page and the person's answer to it. */
export function authorizationRoutes(routes: Hono<AppEnv>, dispatch: Dispatch): void {
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
}

/** The cap token in what the person pasted: a token, a cap URL, or a console URL (`/ui#<token>`). */
function capToken(value: string | null | undefined): string | null {
  const text = (value ?? "").trim();
  if (CAP_TOKEN.test(text)) return text;
  const m = /(?:\/object\/|#)([a-z2-7]{48}|[a-z2-7]{32})(?:[/?#]|$)/.exec(text);
  return m ? m[1]! : null;
}
