import type { Context } from "hono";
import { IAT_PAST_SECONDS, proofRefusalAnswer, proofThumbprint, verifyProof } from "../../shared/holder-proof.ts";
import { type AppEnv, publicOrigin } from "../cap-stub.ts";
import { registry } from "./oauth-common.ts";

/** The algorithms a DPoP proof may use here: the holder keys' (shared/holder-key.ts). */
export const DPOP_ALGS = ["EdDSA", "ES256"];

/**
 * A request's DPoP proof (RFC 9449), checked with the vault's one verifier
 * (shared/holder-proof.ts) and its `jti` spent in the registry.
 * - `none`: no `DPoP` header.
 * - `proved`: a fresh proof by the key `jkt`, for this method, URL and token.
 * - `refused`: `holder` true when the key's signature verified but a claim
 *   failed or the proof was seen before (the holder is told); false when
 *   anyone could have sent it (malformed, bad signature).
 */
export type DpopCheck = { kind: "none" } | { kind: "proved"; jkt: string } | { kind: "refused"; holder: boolean };

/**
 * `bound`: the key the token is bound to, when the request presents one. A
 * proof by any other key then fails as anyone's could (`holder` false), so a
 * thief's own proofs cannot tell a live bound token from an unknown one.
 */
export async function checkDpop(
  c: Context<AppEnv>,
  path: string,
  token: string | null,
  bound: string | null = null,
): Promise<DpopCheck> {
  const proof = c.req.header("dpop") ?? null;
  if (proof === null) return { kind: "none" };
  const jkt = bound ?? (await proofThumbprint(proof));
  if (!jkt) return { kind: "refused", holder: false };
  const now = Date.now();
  const url = `${publicOrigin(c)}${path}`;
  const checked = await verifyProof({ proof, method: c.req.method, url, token, jkt, body: { kind: "uncovered" }, now });
  if (!checked.ok) return { kind: "refused", holder: proofRefusalAnswer(checked.reason) === "invalid_proof" };
  const until = (checked.value.iat + IAT_PAST_SECONDS) * 1000;
  if (!(await registry(c).spendProof(jkt, checked.value.jti, until, now))) return { kind: "refused", holder: true };
  return { kind: "proved", jkt };
}
