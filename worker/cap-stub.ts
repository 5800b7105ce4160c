import type { Context } from "hono";
import type { CapObject } from "../durable-objects/cap-object.ts";
import { digestToken, isTokenShaped } from "../shared/token.ts";
import type { Env } from "./env.ts";

export type AppEnv = { Bindings: Env; Variables: { capId?: string } };

/**
 * The object for a token, or `null` for a token that cannot exist. A
 * malformed token is answered exactly like an unknown one, by the caller.
 */
export async function capStub(c: Context<AppEnv>, token: string): Promise<DurableObjectStub<CapObject> | null> {
  if (!isTokenShaped(token)) return null;
  const { key, id } = await digestToken(token);
  c.set("capId", id);
  return c.env.CAPS.get(c.env.CAPS.idFromName(key));
}

/** The origin used in minted cap URLs. */
export function publicOrigin(c: Context<AppEnv>): string {
  return (c.env.CAPVAULT_PUBLIC_URL ?? new URL(c.req.url).origin).replace(/\/+$/, "");
}
