/**
 * Every refusal of the OAuth endpoints, as a tagged union mapped to the wire
 * by one exhaustive switch (a new reason does not compile until it has an
 * answer). The wire form is RFC 6749 §5.2's `{ error, error_description }`,
 * not the vault's `{ error: { code } }`: OAuth clients read these. No text
 * echoes what the client sent: a code, a token or a verifier never comes back.
 */
export type OAuthRefusal =
  | { reason: "body_too_large" }
  | { reason: "malformed_body" }
  | { reason: "missing_param"; param: OAuthParam }
  | { reason: "unsupported_grant_type" }
  | { reason: "unsupported_response_type" }
  | { reason: "unknown_client" }
  | { reason: "redirect_uri_mismatch" }
  | { reason: "pkce_required" }
  | { reason: "pkce_mismatch" }
  | { reason: "bad_code" }
  | { reason: "bad_refresh" }
  | { reason: "grant_ended" }
  | { reason: "wrong_resource" }
  | { reason: "access_denied" }
  | { reason: "bad_redirect_uris" }
  | { reason: "bad_metadata"; field: "client_name" | "grant_types" | "response_types" }
  | { reason: "registration_full" }
  | { reason: "registration_busy" }
  | { reason: "invalid_token" }
  /** RFC 9449: at the token endpoint 400, at /mcp 401 (the holder's own proof is stale, replayed or misdirected). */
  | { reason: "invalid_dpop_proof"; at: "token" | "resource" };

/** The parameters a refusal may name: a fixed list, so nothing the client sent is echoed. */
export type OAuthParam =
  | "client_id"
  | "redirect_uri"
  | "code"
  | "code_verifier"
  | "code_challenge"
  | "refresh_token"
  | "grant_type"
  | "response_type"
  | "state"
  | "resource"
  | "scope";

export interface OAuthAnswer {
  status: 400 | 401 | 413 | 429 | 503;
  error: string;
  description: string;
}

export function oauthAnswer(r: OAuthRefusal): OAuthAnswer {
  switch (r.reason) {
    case "body_too_large":
      return { status: 413, error: "invalid_request", description: "the request body is too large" };
    case "malformed_body":
      return { status: 400, error: "invalid_request", description: "the request body is not what this endpoint reads" };
    case "missing_param":
      return { status: 400, error: "invalid_request", description: `${r.param} is missing, repeated or malformed` };
    case "unsupported_grant_type":
      return {
        status: 400,
        error: "unsupported_grant_type",
        description: "grant_type must be authorization_code or refresh_token",
      };
    case "unsupported_response_type":
      return { status: 400, error: "unsupported_response_type", description: "response_type must be code" };
    case "unknown_client":
      return { status: 401, error: "invalid_client", description: "no such client" };
    case "redirect_uri_mismatch":
      return { status: 400, error: "invalid_request", description: "redirect_uri is not one the client registered" };
    case "pkce_required":
      return {
        status: 400,
        error: "invalid_request",
        description: "PKCE is required: a code_challenge with code_challenge_method S256",
      };
    case "pkce_mismatch":
      return {
        status: 400,
        error: "invalid_grant",
        description: "the code_verifier does not match the code_challenge",
      };
    case "bad_code":
      return {
        status: 400,
        error: "invalid_grant",
        description: "the code is unknown, expired, already used, or was issued to another client or redirect_uri",
      };
    case "bad_refresh":
      return { status: 400, error: "invalid_grant", description: "the refresh token is unknown, expired or rotated" };
    case "grant_ended":
      return { status: 400, error: "invalid_grant", description: "the grant was revoked" };
    case "wrong_resource":
      return {
        status: 400,
        error: "invalid_target",
        description: "this server issues tokens only for its /mcp resource",
      };
    case "access_denied":
      return { status: 400, error: "access_denied", description: "the person declined" };
    case "bad_redirect_uris":
      return {
        status: 400,
        error: "invalid_redirect_uri",
        description:
          "redirect_uris must be 1 to 10 absolute https URLs, or http on a loopback host, without a fragment, each at most 2000 characters",
      };
    case "bad_metadata":
      return { status: 400, error: "invalid_client_metadata", description: `${r.field} is not acceptable` };
    case "registration_full":
      return { status: 503, error: "temporarily_unavailable", description: "no more clients can be registered" };
    case "registration_busy":
      return {
        status: 429,
        error: "temporarily_unavailable",
        description: "too many registrations: try again in a minute",
      };
    case "invalid_token":
      return { status: 401, error: "invalid_token", description: "the access token is unknown, expired or revoked" };
    case "invalid_dpop_proof":
      return {
        status: r.at === "token" ? 400 : 401,
        error: "invalid_dpop_proof",
        description: "the DPoP proof is missing, malformed, stale, replayed, by another key or not for this request",
      };
  }
}

/** The JSON error answer (RFC 6749 §5.2), never cached. */
export function oauthError(r: OAuthRefusal, headers: Record<string, string> = {}): Response {
  const a = oauthAnswer(r);
  return Response.json(
    { error: a.error, error_description: a.description },
    { status: a.status, headers: { "Cache-Control": "no-store", ...headers } },
  );
}
