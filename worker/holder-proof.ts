import type { Context, MiddlewareHandler } from "hono";
import type { HolderAdmission } from "../durable-objects/holder-binding.ts";
import { capObjectStub } from "../durable-objects/object-stubs.ts";
import {
  IAT_PAST_SECONDS,
  type ProofBody,
  proofRefusalAnswer,
  proofThumbprint,
  verifyProof,
} from "../shared/holder-proof.ts";
import { refusal } from "../shared/refusals.ts";
import { digestToken, mayBeBound, verifyToken } from "../shared/token.ts";
import type { AppEnv } from "./cap-stub.ts";
import { errorResponse } from "./http-error.ts";

/**
 * The holder check of a holder-bound cap (issue 20), in the worker before the
 * cap's object does anything that costs: the request's DPoP proof is verified
 * here (shared/holder-proof.ts), then the object admits it (the key is the
 * cap's, the jti unseen: durable-objects/holder-binding.ts). A token whose
 * first bit says "unbound" skips all of it (shared/token.ts, mayBeBound).
 */

/** The routes that take proofs this round: `<method> <path after the token>`, `*` one segment. */
const PROVED_ROUTES = [
  "GET ",
  "DELETE ",
  "GET /file",
  "PUT /file",
  "DELETE /file",
  "GET /stat",
  "GET /list",
  "POST /move",
  "POST /subdir",
  "GET /audit",
  "GET /children",
  "GET /tree",
  "DELETE /tree/*",
  "DELETE /children/*",
];

function provedRoute(method: string, rest: string): boolean {
  const shape = rest.replace(/^\/(tree|children)\/[^/]+$/, "/$1/*");
  return PROVED_ROUTES.includes(`${method} ${shape}`);
}

/** A 401 for the holder's own stale, replayed or misdirected proof (RFC 9449 §7.1). */
function invalidProof(): Response {
  const response = errorResponse(refusal("invalidDpopProof"));
  response.headers.set("WWW-Authenticate", 'DPoP error="invalid_dpop_proof"');
  return response;
}

const unknownCap = () => errorResponse(refusal("noSuchCap"));

/**
 * Wraps the request body so its SHA-256 is compared with the proof's
 * `content_digest` as its last byte passes: on a mismatch the stream errors
 * instead of ending, so the write it feeds stores nothing.
 */
function digestChecked(c: Context<AppEnv>, claimed: Uint8Array): { mismatched: () => boolean } {
  let mismatch = false;
  const digest = new crypto.DigestStream("SHA-256");
  const hashing = digest.getWriter();
  const body = c.req.raw.body ?? new Response("").body!;
  const checking = new TransformStream<Uint8Array, Uint8Array>({
    async transform(chunk, controller) {
      await hashing.write(chunk);
      controller.enqueue(chunk);
    },
    async flush(controller) {
      await hashing.close();
      const actual = new Uint8Array(await digest.digest);
      if (actual.length !== claimed.length || actual.some((b, i) => b !== claimed[i])) {
        mismatch = true;
        controller.error(new Error("content_digest mismatch"));
      }
    },
  });
  // The reader (the write) sees the error; this pipe's own rejection is expected.
  body.pipeTo(checking.writable).catch(() => undefined);
  c.req.raw = new Request(c.req.raw, { body: checking.readable, duplex: "half" } as RequestInit);
  return { mismatched: () => mismatch };
}

/** Requests already admitted: Hono runs a middleware on `/:token/*` once more for a route below it. */
const admitted = new WeakSet<Context<AppEnv>>();

/** For `/object/:token` and everything below it. */
export const holderGate: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (admitted.has(c)) return next();
  admitted.add(c);
  const token = c.req.param("token") ?? "";
  // Unbound tokens (and forged ones, which the route refuses itself) pass untouched.
  if (!mayBeBound(token) || !(await verifyToken(token, c.env.CAPVAULT_TOKEN_KEY))) return next();
  const url = new URL(c.req.url);
  const rest = url.pathname.slice(`/object/${token}`.length);
  const method = c.req.method;
  const origin = c.env.CAPVAULT_PUBLIC_URL?.replace(/\/+$/, "") ?? "";
  const cap = capObjectStub(c.env, (await digestToken(token)).key);

  let admission: HolderAdmission = { kind: "unproved" };
  let claimedDigest: Uint8Array | null = null;
  const now = Date.now();
  if (provedRoute(method, rest) && /^https?:\/\/[^/?#\s]+$/.test(origin)) {
    const hasBody = method !== "GET" && method !== "HEAD" && method !== "DELETE";
    const body: ProofBody = hasBody ? { kind: "streamed" } : { kind: "none" };
    // The key named in the proof is the one checked here; the object compares it with the cap's.
    const proof = c.req.header("dpop") ?? null;
    const jkt = await proofThumbprint(proof);
    if (jkt) {
      const checked = await verifyProof({ proof, method, url: origin + url.pathname, token, jkt, body, now });
      if (checked.ok) {
        const replayableUntil = (checked.value.iat + IAT_PAST_SECONDS) * 1000;
        admission = { kind: "proved", jkt, fresh: true, jti: checked.value.jti, replayableUntil };
        claimedDigest = checked.value.claimedDigest;
      } else if (proofRefusalAnswer(checked.reason) === "invalid_proof") {
        admission = { kind: "proved", jkt, fresh: false };
      }
    }
  }
  const verdict = await cap.admitHolder(admission, now);
  if (!verdict.ok) {
    if (verdict.error.code === "unauthorized") return invalidProof();
    return verdict.error.code === "no_such_cap" ? unknownCap() : errorResponse(verdict.error);
  }
  if (!claimedDigest || admission.kind !== "proved") return next();
  const digest = digestChecked(c, claimedDigest);
  await next();
  if (digest.mismatched()) c.res = invalidProof();
};
