/**
 * DPoP proofs (RFC 9449 §4.2, §4.3, with the MCP DPoP profile's
 * `content_digest`): the check a request through a bound cap must pass. Pure
 * and bounded: the proof is at most {@link MAX_PROOF_BYTES}, parsed once, and
 * costs one SHA-256 of the key, one of the token and one signature check.
 */
import {
  base64url,
  type HolderJwk,
  importHolderKey,
  jwkThumbprint,
  parseHolderJwk,
  unbase64url,
  webCryptoAlgorithm,
} from "./holder-key.ts";
import { decodeUtf8Strict } from "./strict-utf8.ts";

/** A proof longer than this is refused unread: a real one is about 600 bytes. */
export const MAX_PROOF_BYTES = 8192;
/** `jti` is a string of 1 to 128 visible ASCII characters (kept per cap for replay checks). */
export const MAX_JTI_LENGTH = 128;
/** A proof is fresh from {@link IAT_PAST_SECONDS} before the server's clock to {@link IAT_FUTURE_SECONDS} after. */
export const IAT_PAST_SECONDS = 60;
export const IAT_FUTURE_SECONDS = 5;

/**
 * Why a proof was refused. `unknown_cap` reasons are what anyone without the
 * key can cause: the caller answers them exactly like an unknown token, so a
 * leaked URL tells its finder nothing. `invalid_proof` reasons come after the
 * signature verified under the cap's key: the holder itself sent a stale,
 * replayed or misdirected proof, and is told so (401 invalid_dpop_proof).
 */
export const PROOF_REFUSALS = {
  no_proof: "unknown_cap",
  malformed: "unknown_cap",
  bad_typ: "unknown_cap",
  bad_alg: "unknown_cap",
  bad_jwk: "unknown_cap",
  wrong_key: "unknown_cap",
  bad_signature: "unknown_cap",
  stale: "invalid_proof",
  bad_jti: "invalid_proof",
  replayed: "invalid_proof",
  wrong_htm: "invalid_proof",
  wrong_htu: "invalid_proof",
  wrong_ath: "invalid_proof",
  wrong_digest: "invalid_proof",
} as const satisfies Record<string, "unknown_cap" | "invalid_proof">;

export type ProofRefusal = keyof typeof PROOF_REFUSALS;

/**
 * The body a proof must cover: none (GET, HEAD, DELETE), its SHA-256 known, or streamed (checked at its end);
 * `uncovered`: RFC 9449 proper (OAuth's token endpoint and /mcp), where a proof binds method, URL and token only.
 */
export type ProofBody =
  | { kind: "none" }
  | { kind: "digest"; sha256: Uint8Array }
  | { kind: "streamed" }
  | { kind: "uncovered" };

export interface ProofRequest {
  /** The `DPoP` header as received (several headers joined by ", " are malformed), or null. */
  proof: string | null;
  method: string;
  /** The vault's public origin plus the request path; a query or fragment is ignored. */
  url: string;
  /** The token the request presents: `ath` is its SHA-256; null for one that presents none (a token request). */
  token: string | null;
  /** That `ath`, when the caller has the token's SHA-256 already (saves hashing it again). */
  ath?: string;
  /** The cap's stored thumbprint. */
  jkt: string;
  body: ProofBody;
  /** The server's clock, ms since the epoch. */
  now: number;
}

export interface VerifiedProof {
  jkt: string;
  jti: string;
  /** Seconds since the epoch, as the proof said. */
  iat: number;
  /** For a streamed body: the SHA-256 the proof claims, to compare once the body has been read. */
  claimedDigest: Uint8Array | null;
}

export type ProofCheck = { ok: true; value: VerifiedProof } | { ok: false; reason: ProofRefusal };

const PROOF_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;
const JTI_SHAPE = /^[\x21-\x7e]+$/;
const DIGEST_SHAPE = /^sha-256=:([A-Za-z0-9+/]{43}=):$/;
const SIGNATURE_BYTES = 64;

const refused = (reason: ProofRefusal): ProofCheck => ({ ok: false, reason });

function jsonObject(part: string): Record<string, unknown> | null {
  const bytes = unbase64url(part);
  const text = bytes && decodeUtf8Strict(bytes);
  if (!text) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** Standard base64 with padding (RFC 9530's form for `content_digest`). */
export function base64(bytes: Uint8Array): string {
  const url = base64url(bytes).replace(/-/g, "+").replace(/_/g, "/");
  return url + "=".repeat((4 - (url.length % 4)) % 4);
}

/** The `content_digest` value for a body: `sha-256=:<base64 SHA-256>:`. */
export async function contentDigest(body: Uint8Array): Promise<string> {
  return `sha-256=:${base64(await sha256(body))}:`;
}

async function sha256(bytes: Uint8Array): Promise<Uint8Array> {
  // WebCrypto hashes any view; the DOM lib's types (the console signs with this) want a non-shared buffer.
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
}

/** The `ath` claim for a token: base64url SHA-256 of its ASCII. */
export async function accessTokenHash(token: string): Promise<string> {
  return base64url(await sha256(new TextEncoder().encode(token)));
}

/** Decodes a `content_digest` claim into its 32 bytes, or null. */
function parseDigest(value: unknown): Uint8Array | null {
  if (typeof value !== "string") return null;
  const m = DIGEST_SHAPE.exec(value);
  if (!m) return null;
  const bytes = unbase64url(m[1]!.slice(0, 43).replace(/\+/g, "-").replace(/\//g, "_"));
  return bytes && bytes.length === 32 ? bytes : null;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * RFC 9449 §4.3 step 9: the URIs compare after RFC 3986 §6.2.2 and §6.2.3
 * normalisation. The URL parser lowercases scheme and host and drops a default
 * port; percent-escapes are then uppercased and unreserved ones decoded.
 */
export function normalizeHtu(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return null;
  const path = (url.pathname || "/").replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
  return url.origin + path;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** True when a streamed body's SHA-256 is the one its proof claimed. */
export function digestMatches(claimed: Uint8Array, actual: Uint8Array): boolean {
  return equalBytes(claimed, actual);
}

/**
 * Imported keys by thumbprint: a holder signs many requests with one key, and
 * the import is a third of a check. The resolved key is kept, never a promise
 * (workerd forbids sharing one between requests); bounded, dropped whole when full.
 */
const imported = new Map<string, CryptoKey>();
const MAX_IMPORTED = 256;

async function verifyingKey(jkt: string, jwk: HolderJwk): Promise<CryptoKey | null> {
  const known = imported.get(jkt);
  if (known) return known;
  const key = await importHolderKey(jwk);
  if (!key) return null;
  if (imported.size >= MAX_IMPORTED) imported.clear();
  imported.set(jkt, key);
  return key;
}

/**
 * Verifies `request.proof` for a request through the cap bound to
 * `request.jkt`. The key and signature are checked before any claim, so a
 * claim-level refusal proves the sender holds the key. The caller still owes
 * the replay check: `jti` once per cap within the `iat` window. Never rejects.
 */
export async function verifyProof(request: ProofRequest): Promise<ProofCheck> {
  const { proof } = request;
  if (proof === null || proof === "") return refused("no_proof");
  if (proof.length > MAX_PROOF_BYTES || !PROOF_SHAPE.test(proof)) return refused("malformed");
  const [headerPart, payloadPart, signaturePart] = proof.split(".") as [string, string, string];
  const header = jsonObject(headerPart);
  const claims = jsonObject(payloadPart);
  const signature = unbase64url(signaturePart);
  if (!header || !claims || !signature) return refused("malformed");
  // No extension this verifier understands may be made critical (RFC 7515 §4.1.11).
  if ("crit" in header) return refused("malformed");
  if (header.typ !== "dpop+jwt") return refused("bad_typ");
  const { alg } = header;
  if (alg !== "EdDSA" && alg !== "ES256") return refused("bad_alg");
  const parsed = parseHolderJwk(header.jwk);
  if (!parsed.ok) return refused("bad_jwk");
  const jwk: HolderJwk = parsed.jwk;
  if ((alg === "EdDSA") !== (jwk.kty === "OKP")) return refused("bad_alg");
  const jkt = await jwkThumbprint(jwk);
  if (jkt !== request.jkt) return refused("wrong_key");
  if (signature.length !== SIGNATURE_BYTES) return refused("bad_signature");
  const key = await verifyingKey(jkt, jwk);
  if (!key) return refused("bad_jwk");
  const signed = new TextEncoder().encode(`${headerPart}.${payloadPart}`);
  const verifyAlg = jwk.kty === "OKP" ? webCryptoAlgorithm(jwk) : { name: "ECDSA", hash: "SHA-256" };
  let valid = false;
  try {
    valid = await crypto.subtle.verify(verifyAlg, key, signature as Uint8Array<ArrayBuffer>, signed);
  } catch {
    valid = false;
  }
  if (!valid) return refused("bad_signature");

  // From here on the holder signed this proof.
  const { jti, htm, htu, iat, ath } = claims;
  if (typeof iat !== "number" || !Number.isFinite(iat)) return refused("stale");
  const nowSeconds = request.now / 1000;
  if (iat < nowSeconds - IAT_PAST_SECONDS || iat > nowSeconds + IAT_FUTURE_SECONDS) return refused("stale");
  if (typeof jti !== "string" || jti.length > MAX_JTI_LENGTH || !JTI_SHAPE.test(jti)) return refused("bad_jti");
  if (htm !== request.method) return refused("wrong_htm");
  const expectedHtu = normalizeHtu(request.url);
  if (typeof htu !== "string" || htu.length > MAX_PROOF_BYTES || expectedHtu === null) return refused("wrong_htu");
  if (normalizeHtu(htu) !== expectedHtu) return refused("wrong_htu");
  if (
    request.token !== null &&
    (typeof ath !== "string" || ath !== (request.ath ?? (await accessTokenHash(request.token))))
  )
    return refused("wrong_ath");

  let claimedDigest: Uint8Array | null = null;
  const { body } = request;
  if (body.kind === "none") {
    // A GET carries no body; a digest, if the client sent one anyway, must be of nothing.
    if (claims.content_digest !== undefined) {
      const d = parseDigest(claims.content_digest);
      if (!d || !equalBytes(d, await sha256(new Uint8Array(0)))) return refused("wrong_digest");
    }
  } else if (body.kind !== "uncovered") {
    claimedDigest = parseDigest(claims.content_digest);
    if (!claimedDigest) return refused("wrong_digest");
    if (body.kind === "digest" && !equalBytes(claimedDigest, body.sha256)) return refused("wrong_digest");
  }
  return { ok: true, value: { jkt, jti, iat, claimedDigest: body.kind === "streamed" ? claimedDigest : null } };
}

/**
 * The thumbprint of the key a proof's header names, unverified, or null: lets
 * a caller that does not know the cap's key yet ask for the one to check
 * against ({@link verifyProof} then checks everything).
 */
export async function proofThumbprint(proof: string | null): Promise<string | null> {
  if (proof === null || proof.length > MAX_PROOF_BYTES || !PROOF_SHAPE.test(proof)) return null;
  const header = jsonObject(proof.slice(0, proof.indexOf(".")));
  const parsed = header && parseHolderJwk(header.jwk);
  return parsed?.ok ? jwkThumbprint(parsed.jwk) : null;
}

/** What a refusal answers: like an unknown token, or 401 invalid_dpop_proof. */
export function proofRefusalAnswer(reason: ProofRefusal): "unknown_cap" | "invalid_proof" {
  return PROOF_REFUSALS[reason];
}
