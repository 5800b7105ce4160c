import type { Context, Hono } from "hono";
import type { AppEnv } from "../cap-stub.ts";
import {
  ACCESS_TTL_MS,
  type Dispatch,
  isRefusal,
  mcpResource,
  PKCE_SHAPE,
  readForm,
  registry,
  single,
} from "./oauth-common.ts";
import { checkDpop } from "./oauth-dpop.ts";
import { type OAuthParam, type OAuthRefusal, oauthError } from "./oauth-errors.ts";
import { newId, newSecret, s256, seal, secretDigest, unseal } from "./oauth-secrets.ts";

/** The token endpoint: codes exchanged, refresh tokens rotated; each grant's child cap revoked when it must end. */
export function tokenRoutes(routes: Hono<AppEnv>, dispatch: Dispatch): void {
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
    jkt: string | null,
  ) {
    const now = Date.now();
    const access = newSecret("cva");
    const refresh = newSecret("cvr");
    const accessEnd = grantEnd === null ? now + ACCESS_TTL_MS : Math.min(grantEnd, now + ACCESS_TTL_MS);
    const grantId = newId();
    const base = { grantId, clientId, resource: mcpResource(c), childId, ...(jkt ? { jkt } : {}) };
    const tokens = {
      grantId,
      accessDigest: await secretDigest(access),
      access: { ...base, sealed: await seal(access, childToken), expiresAt: accessEnd },
      refreshDigest: await secretDigest(refresh),
      refresh: { ...base, sealed: await seal(refresh, childToken), expiresAt: grantEnd },
    };
    const answer = {
      access_token: access,
      token_type: jkt ? "DPoP" : "Bearer",
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
    // RFC 9449 §5: a proof for this endpoint binds the tokens to its key; a bad one changes nothing.
    const dpop = await checkDpop(c, "/oauth/token", null);
    if (dpop.kind === "refused") return oauthError({ reason: "invalid_dpop_proof", at: "token" });
    const jkt = dpop.kind === "proved" ? dpop.jkt : null;
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
      const { tokens, answer } = await issue(c, clientId, record.childId, childToken, record.grantExpiresAt, jkt);
      await reg.issue(tokens, digest);
      return tokenAnswer(answer);
    }

    const refresh = get("refresh_token");
    if (isRefusal(refresh)) return oauthError(refresh);
    const digest = await secretDigest(refresh);
    const record = await reg.peekRefresh(digest, Date.now());
    const childToken = record ? await unseal(refresh, record.sealed) : null;
    if (!record || !childToken || record.clientId !== clientId) return oauthError({ reason: "bad_refresh" });
    // A bound grant refreshes only with a proof by its key; without one it answers as an unknown token would and
    // nothing changes (no rotation, no reuse alarm), so a thief learns nothing from it.
    if (record.jkt !== undefined && record.jkt !== jkt) return oauthError({ reason: "bad_refresh" });
    // A grant lives exactly as long as its cap: revoked there (or any ancestor), the refresh fails too.
    const alive = await dispatch(new Request(`${new URL(c.req.url).origin}/object/${childToken}`), c);
    await alive.body?.cancel();
    if (alive.status !== 200) {
      await reg.endGrant(record.grantId);
      return oauthError({ reason: "grant_ended" });
    }
    // The binding is the grant's, fixed at the exchange: a bearer grant stays bearer.
    const { tokens, answer } = await issue(
      c,
      clientId,
      record.childId,
      childToken,
      record.expiresAt,
      record.jkt ?? null,
    );
    const outcome = await reg.rotate(digest, clientId, tokens, Date.now());
    if (outcome.kind === "reused") {
      await revokeChild(c, childToken);
      return oauthError({ reason: "bad_refresh" });
    }
    if (outcome.kind !== "rotated") return oauthError({ reason: "bad_refresh" });
    return tokenAnswer(answer);
  });
}
