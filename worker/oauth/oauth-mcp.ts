import type { Hono } from "hono";
import { type AppEnv, publicOrigin } from "../cap-stub.ts";
import { type Dispatch, mcpResource, registry } from "./oauth-common.ts";
import { checkDpop, DPOP_ALGS } from "./oauth-dpop.ts";
import { oauthError } from "./oauth-errors.ts";
import { secretDigest, unseal } from "./oauth-secrets.ts";

export function mcpRoute(routes: Hono<AppEnv>, dispatch: Dispatch): void {
  /**
   * The tokenless MCP endpoint: `Authorization: Bearer <access token>` (or
   * `DPoP <token>` with its proof, for a DPoP-bound one), served by the
   * cap-in-path endpoint of the child cap the token stands for.
   */
  routes.all("/mcp", async (c) => {
    const metadata = `${publicOrigin(c)}/.well-known/oauth-protected-resource/mcp`;
    const challenge = (error?: string) => `Bearer resource_metadata="${metadata}"${error ? `, error="${error}"` : ""}`;
    const header = c.req.header("authorization") ?? "";
    const m = /^(bearer|dpop) (cva_[A-Za-z0-9_-]{43})$/i.exec(header);
    if (!m) {
      await c.req.raw.body?.cancel();
      if (header === "") {
        return new Response(null, { status: 401, headers: { "WWW-Authenticate": challenge() } });
      }
      return oauthError({ reason: "invalid_token" }, { "WWW-Authenticate": challenge("invalid_token") });
    }
    const access = m[2]!;
    const record = await registry(c).access(await secretDigest(access), Date.now());
    // RFC 9449 §7: a bound token only as `DPoP` with a fresh proof by its key naming it (`ath`); a bearer one only as `Bearer`.
    const dpop = m[1]!.toLowerCase() === "dpop";
    if (record && dpop !== (record.jkt !== undefined)) {
      await c.req.raw.body?.cancel();
      return oauthError({ reason: "invalid_token" }, { "WWW-Authenticate": challenge("invalid_token") });
    }
    if (record?.jkt !== undefined) {
      const proved = await checkDpop(c, "/mcp", access, record.jkt);
      if (proved.kind !== "proved") {
        await c.req.raw.body?.cancel();
        if (proved.kind === "refused" && proved.holder) {
          const dpopChallenge = `DPoP algs="${DPOP_ALGS.join(" ")}", error="invalid_dpop_proof"`;
          return oauthError({ reason: "invalid_dpop_proof", at: "resource" }, { "WWW-Authenticate": dpopChallenge });
        }
        return oauthError({ reason: "invalid_token" }, { "WWW-Authenticate": challenge("invalid_token") });
      }
    }
    const childToken = record && record.resource === mcpResource(c) ? await unseal(access, record.sealed) : null;
    if (!childToken) {
      await c.req.raw.body?.cancel();
      return oauthError({ reason: "invalid_token" }, { "WWW-Authenticate": challenge("invalid_token") });
    }
    const rewritten = new Request(`${new URL(c.req.url).origin}/object/${childToken}/mcp`, c.req.raw);
    rewritten.headers.delete("authorization");
    rewritten.headers.delete("dpop");
    const response = await dispatch(rewritten, c);
    // The cap-in-path endpoint answers a dead cap 404; to an OAuth client that is a dead token.
    if (response.status === 404) {
      await response.body?.cancel();
      return oauthError({ reason: "invalid_token" }, { "WWW-Authenticate": challenge("invalid_token") });
    }
    return response;
  });
}
