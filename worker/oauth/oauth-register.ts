import type { Hono } from "hono";
import type { AppEnv } from "../cap-stub.ts";
import { readJsonBody } from "../json-body.ts";
import { CONTROL, registry } from "./oauth-common.ts";
import { oauthError } from "./oauth-errors.ts";
import { newId } from "./oauth-secrets.ts";

const REGISTER_BODY_BYTES = 16 * 1024;
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;
const MAX_CLIENT_NAME = 100;

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

export function registrationRoutes(routes: Hono<AppEnv>): void {
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
}
