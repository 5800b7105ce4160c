import type { Context, MiddlewareHandler } from "hono";
import type { CapObject } from "../durable-objects/cap-object.ts";
import { capObjectStub } from "../durable-objects/object-stubs.ts";
import { refusal, refuse } from "../shared/refusals.ts";
import type { CapFailure, Result } from "../shared/result.ts";
import { digestToken, isLegacyToken, verifyToken } from "../shared/token.ts";
import type { CapInfo } from "../shared/wire-types.ts";
import type { Env } from "./env.ts";
import { ticketedStub, verifiedByGate } from "./holder-ticket.ts";
import { errorResponse } from "./http-error.ts";

export type AppEnv = { Bindings: Env; Variables: { capId?: string } };

/**
 * The object for a token, or the refusal for a token this vault never
 * minted: every surface resolves its token here. A malformed or forged token
 * is answered exactly like a revoked one (`no_such_cap`); a token of the
 * format-0 shape (32 characters, no MAC) gets `legacy_token`, which names
 * the admin's re-issue, and is the same answer whether or not such a cap
 * ever existed: no object is asked.
 */
export async function capStub(c: Context<AppEnv>, token: string): Promise<Result<DurableObjectStub<CapObject>>> {
  // The MAC is checked before any object is addressed: the runtime keeps a
  // file for every object ever addressed, so a made-up token must never name one.
  const known = verifiedByGate(c, token);
  if (!known && !(await verifyToken(token, c.env.CAPVAULT_TOKEN_KEY)))
    return refuse(isLegacyToken(token) ? "legacyToken" : "noSuchCap");
  const { key, id } = known ?? (await digestToken(token));
  c.set("capId", id);
  return { ok: true, value: ticketedStub(c, key, capObjectStub(c.env, key)) };
}

export type CapStub = DurableObjectStub<CapObject>;

/**
 * The object for a token that is alive right now, with what it is. Routes
 * that must look at a request before the cap object does (its body, its
 * query) ask this first, so a dead, unknown or malformed token answers
 * `no_such_cap`, byte for byte the same, whatever else is wrong.
 */
export async function liveCap(c: Context<AppEnv>, token: string): Promise<Result<{ cap: CapStub; info: CapInfo }>> {
  const cap = await capStub(c, token);
  if (!cap.ok) return cap;
  const info = await cap.value.describe();
  return info.ok ? { ok: true, value: { cap: cap.value, info: info.value } } : info;
}

/** `problem`, unless the cap is dead: then `no_such_cap`, as for every request to a dead cap. */
export async function problemFor(cap: CapStub, problem: CapFailure): Promise<CapFailure> {
  const info = await cap.describe();
  return info.ok ? problem : info.error;
}

/** The configured origin (`https://host[:port]`), or `null` when none is set or it is not an origin. */
function configuredOrigin(env: Env): string | null {
  const url = env.CAPVAULT_PUBLIC_URL?.replace(/\/+$/, "") ?? "";
  return /^https?:\/\/[^/?#\s]+$/.test(url) ? url : null;
}

/**
 * The origin used in minted cap URLs: the configured one only. Callers run
 * behind {@link requirePublicOrigin}, so it is always set there.
 */
export function publicOrigin(c: Context<AppEnv>): string {
  return configuredOrigin(c.env) ?? "";
}

/**
 * Guards every route that hands out cap URLs (minting, and RPC and MCP
 * sessions, which mint and name URLs). On Cloudflare the Host header is the
 * caller's to choose, so an origin taken from it would let a caller point the
 * URLs it is handed (and passes on) at a server of its own: with no
 * CAPVAULT_PUBLIC_URL the vault refuses instead. The local launcher always sets it.
 */
export const requirePublicOrigin: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (configuredOrigin(c.env) === null) return errorResponse(refusal("noPublicUrl"));
  await next();
};
