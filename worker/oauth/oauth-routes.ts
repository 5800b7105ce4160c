import { type Context, Hono } from "hono";
import { type AppEnv, publicOrigin, requirePublicOrigin } from "../cap-stub.ts";
import { authorizationRoutes } from "./oauth-authorize.ts";
import { type Dispatch, mcpResource } from "./oauth-common.ts";
import { DPOP_ALGS } from "./oauth-dpop.ts";
import { mcpRoute } from "./oauth-mcp.ts";
import { registrationRoutes } from "./oauth-register.ts";
import { tokenRoutes } from "./oauth-token.ts";

/**
 * OAuth 2.1 for remote MCP clients (issue 22), one module per job: metadata
 * here, registration (oauth-register.ts), consent (oauth-authorize.ts),
 * tokens (oauth-token.ts) and the tokenless /mcp (oauth-mcp.ts).
 */
export function oauthRoutes(dispatch: Dispatch) {
  const routes = new Hono<AppEnv>();
  for (const path of ["/.well-known/*", "/oauth/*", "/mcp"]) routes.use(path, requirePublicOrigin);

  /** RFC 9728 protected-resource metadata, at the path the 401 names and at the root form. */
  const resourceMetadata = (c: Context<AppEnv>) =>
    c.json({
      resource: mcpResource(c),
      authorization_servers: [publicOrigin(c)],
      bearer_methods_supported: ["header"],
      dpop_signing_alg_values_supported: DPOP_ALGS,
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
      dpop_signing_alg_values_supported: DPOP_ALGS,
    });
  });

  registrationRoutes(routes);
  authorizationRoutes(routes, dispatch);
  tokenRoutes(routes, dispatch);
  mcpRoute(routes, dispatch);
  return routes;
}
