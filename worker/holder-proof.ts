import type { Context, MiddlewareHandler } from "hono";
import type { HolderAdmission } from "../durable-objects/holder-binding.ts";
import { capObjectStub } from "../durable-objects/object-stubs.ts";
import { base64url } from "../shared/holder-key.ts";
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
import { fileTicket, spendTicket } from "./holder-ticket.ts";
import { errorResponse } from "./http-error.ts";

/**
 * The holder check of a holder-bound cap (issue 20), in the worker before the
 * cap's object does anything that costs: the request's DPoP proof is verified
 * here (shared/holder-proof.ts), then the object admits it (the key is the
 * cap's, the jti unseen: durable-objects/holder-binding.ts) in the same call
 * as the route's first request to it (worker/holder-ticket.ts). A token whose
 * first bit says "unbound" skips all of it (shared/token.ts, mayBeBound).
 */

/** The routes that take proofs: `<method> <path after the token>`, `*` one segment. Every other one refuses a bound cap as unknown. */
const PROVED_ROUTES = [
  "GET ",
  "DELETE ",
  "GET /file",
  "PUT /file",
  "DELETE /file",
  "PUT /folder",
  "DELETE /folder",
  "GET /stat",
  "GET /list",
  "GET /search",
  "GET /lines",
  "POST /move",
  "POST /subdir",
  "GET /audit",
  "GET /children",
  "GET /tree",
  "DELETE /tree/*",
  "DELETE /children/*",
  "GET /versions",
  "GET /versions/*",
  "POST /versions/*/restore",
  "POST /versions/*/redact",
  "GET /watch",
  "POST /memory",
  "POST /mcp",
  "GET /mcp",
  "POST /rpc",
  "GET /rpc",
];

export function provedRoute(method: string, rest: string): boolean {
  const shape = rest
    .replace(/^\/(tree|children|versions)\/[^/]+$/, "/$1/*")
    .replace(/^\/versions\/[^/]+\/(restore|redact)$/, "/versions/*/$1");
  return PROVED_ROUTES.includes(`${method} ${shape}`);
}

/**
 * WebSocket upgrades (RPC, watch): a browser cannot set a `DPoP` header on
 * one, so the proof may ride in `Sec-WebSocket-Protocol` as the entry
 * `dpop.<proof>` next to {@link DPOP_SUBPROTOCOL}, which the 101 names back
 * (a browser fails a handshake whose answer names no offered protocol). The
 * proof is the usual one (htm GET, htu the https URL) and, like every proof,
 * admitted once: it opens one upgrade.
 */
export const DPOP_SUBPROTOCOL = "capvault.dpop";
const PROTOCOL_PROOF_PREFIX = "dpop.";

function upgradeProof(c: Context<AppEnv>): string | null {
  if (c.req.header("upgrade")?.toLowerCase() !== "websocket") return null;
  const offered = (c.req.header("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
  if (!offered.includes(DPOP_SUBPROTOCOL)) return null;
  const entries = offered.filter((p) => p.startsWith(PROTOCOL_PROOF_PREFIX));
  return entries.length === 1 ? entries[0]!.slice(PROTOCOL_PROOF_PREFIX.length) : null;
}

/**
 * Requests that came through `/cap/...` with the token in `Authorization`
 * (worker/cap-header-routes.ts), rewritten to `/object/<token>/...`: the path
 * the client used (its proof's `htu`) and the scheme it named. Keyed by the
 * rewritten Request object itself, so no client header can claim either.
 */
export const headerCarried = new WeakMap<Request, { path: string; scheme: "dpop" | "bearer" }>();

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

/** The `ath` of a token from its hex SHA-256 (the object's key): base64url of the same 32 bytes. */
function athOf(hexDigest: string): string {
  return base64url(Uint8Array.from(hexDigest.match(/../g) ?? [], (h) => Number.parseInt(h, 16)));
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
  const { key, id } = await digestToken(token);
  const cap = capObjectStub(c.env, key);

  let admission: HolderAdmission = { kind: "unproved" };
  let claimedDigest: Uint8Array | null = null;
  const now = Date.now();
  const carried = headerCarried.get(c.req.raw);
  const headerProof = c.req.header("dpop") ?? null;
  const protocolProof = headerProof === null ? upgradeProof(c) : null;
  // `Authorization: Bearer` never carries a bound cap (RFC 9449 §7.2): it answers as unknown, proof or not.
  const mayProve = carried?.scheme !== "bearer";
  if (mayProve && provedRoute(method, rest) && /^https?:\/\/[^/?#\s]+$/.test(origin)) {
    const hasBody = method !== "GET" && method !== "HEAD" && method !== "DELETE" && c.req.raw.body !== null;
    const body: ProofBody = hasBody ? { kind: "streamed" } : { kind: "none" };
    // The key named in the proof is the one checked here; the object compares it with the cap's.
    const proof = headerProof ?? protocolProof;
    const jkt = await proofThumbprint(proof);
    if (jkt) {
      const htu = origin + (carried?.path ?? url.pathname);
      const checked = await verifyProof({ proof, method, url: htu, token, ath: athOf(key), jkt, body, now });
      if (checked.ok) {
        const replayableUntil = (checked.value.iat + IAT_PAST_SECONDS) * 1000;
        admission = {
          kind: "proved",
          jkt,
          fresh: true,
          jti: checked.value.jti,
          iat: checked.value.iat,
          replayableUntil,
        };
        claimedDigest = checked.value.claimedDigest;
      } else if (proofRefusalAnswer(checked.reason) === "invalid_proof") {
        admission = { kind: "proved", jkt, fresh: false };
      }
    }
  }
  // The admission rides on the route's first call to the object (worker/holder-ticket.ts).
  fileTicket(c, { token, key, id, admission, now, verdict: null });
  const isUpgrade = protocolProof !== null && admission.kind === "proved";
  const digest = claimedDigest && admission.kind === "proved" ? digestChecked(c, claimedDigest) : null;
  await next();
  const verdict = await spendTicket(c, cap)!;
  if (!verdict.ok) {
    await c.res.body?.cancel().catch(() => undefined);
    if (verdict.error.code === "unauthorized") return replaceResponse(c, invalidProof());
    return replaceResponse(c, verdict.error.code === "no_such_cap" ? unknownCap() : errorResponse(verdict.error));
  }
  if (digest?.mismatched()) return replaceResponse(c, invalidProof());
  if (isUpgrade && c.res.status === 101 && c.res.webSocket) {
    const { webSocket } = c.res;
    c.res = new Response(null, { status: 101, webSocket, headers: { "Sec-WebSocket-Protocol": DPOP_SUBPROTOCOL } });
  }
};

/** Hono merges the old response's headers into a new one; a refusal keeps none of the route's (ETag, ...). */
function replaceResponse(c: Context<AppEnv>, response: Response): void {
  c.res = undefined as unknown as Response;
  c.res = response;
}
