import type { Context } from "hono";
import { refusal } from "../shared/refusals.ts";
import type { AppEnv } from "./cap-stub.ts";
import { headerCarried } from "./holder-proof.ts";
import { errorResponse } from "./http-error.ts";

/** A token as minted (base32, 48 characters); anything else answers as an unknown cap. */
const AUTHORIZATION = /^(dpop|bearer) ([a-z2-7]{1,128})$/i;

/**
 * Caps outside URLs (issue 20): `/cap/<route>` is `/object/<token>/<route>`
 * with the token in `Authorization: DPoP <token>` (a holder-bound cap, with
 * its `DPoP` proof, whose `htu` is this `/cap/...` URL) or `Authorization:
 * Bearer <token>` (an unbound cap), so the cap is in no URL, log or command
 * line. The request is rewritten and served by the same routes, so every
 * answer, refusal and limit is theirs; a missing or malformed header answers
 * as an unknown token.
 */
export function capFromHeader(dispatch: (request: Request, c: Context<AppEnv>) => Response | Promise<Response>) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    const m = AUTHORIZATION.exec(c.req.header("authorization") ?? "");
    if (!m) return errorResponse(refusal("noSuchCap"));
    const url = new URL(c.req.url);
    const rest = url.pathname.slice("/cap".length);
    const rewritten = new Request(`${url.origin}/object/${m[2]}${rest}${url.search}`, c.req.raw);
    rewritten.headers.delete("authorization");
    headerCarried.set(rewritten, { path: url.pathname, scheme: m[1]!.toLowerCase() as "dpop" | "bearer" });
    return dispatch(rewritten, c);
  };
}
