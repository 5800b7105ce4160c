/**
 * Making DPoP proofs (RFC 9449 §4.2): the client half of shared/holder-proof.ts,
 * used by the SDK and by the tests of the verifier. WebCrypto only.
 */
import { base64url, type HolderJwk } from "./holder-key.ts";
import { accessTokenHash, contentDigest } from "./holder-proof.ts";

/** A holder's signing side: its private key and the public JWK the proof carries. */
export interface ProofSigner {
  privateKey: CryptoKey;
  jwk: HolderJwk;
}

/** What a proof is for. `body` null: a request without one (no `content_digest`). */
export interface ProofTarget {
  method: string;
  /** Origin plus path; a query or fragment is dropped, as `htu` wants. */
  url: string;
  token: string;
  body: Uint8Array | null;
  /** Seconds since the epoch; defaults to the clock. */
  iat?: number;
  /** Defaults to 16 random bytes in base64url. */
  jti?: string;
}

const encoder = new TextEncoder();

/** The JWS `alg` for a key: EdDSA for Ed25519, ES256 for P-256. */
export function algOf(jwk: HolderJwk): "EdDSA" | "ES256" {
  return jwk.kty === "OKP" ? "EdDSA" : "ES256";
}

/** The URL as `htu`: no query, no fragment. */
export function htuOf(url: string): string {
  const u = new URL(url);
  return u.origin + u.pathname;
}

/** The protected header and claims, before signing (tests alter them to build bad proofs). */
export async function proofParts(
  jwk: HolderJwk,
  target: ProofTarget,
): Promise<{ header: Record<string, unknown>; claims: Record<string, unknown> }> {
  const claims: Record<string, unknown> = {
    jti: target.jti ?? base64url(crypto.getRandomValues(new Uint8Array(16))),
    htm: target.method,
    htu: htuOf(target.url),
    iat: target.iat ?? Math.floor(Date.now() / 1000),
    ath: await accessTokenHash(target.token),
  };
  if (target.body !== null) claims.content_digest = await contentDigest(target.body);
  return { header: { typ: "dpop+jwt", alg: algOf(jwk), jwk: { ...jwk } }, claims };
}

/** Signs a header and claims as a compact JWS with the signer's key (raw r||s for ES256, as JWS wants). */
export async function signJws(
  privateKey: CryptoKey,
  header: Record<string, unknown>,
  claims: Record<string, unknown>,
): Promise<string> {
  const input = `${base64url(encoder.encode(JSON.stringify(header)))}.${base64url(encoder.encode(JSON.stringify(claims)))}`;
  const algorithm = privateKey.algorithm.name === "Ed25519" ? { name: "Ed25519" } : { name: "ECDSA", hash: "SHA-256" };
  const signature = new Uint8Array(await crypto.subtle.sign(algorithm, privateKey, encoder.encode(input)));
  return `${input}.${base64url(signature)}`;
}

/** A fresh DPoP proof for one request. */
export async function signProof(signer: ProofSigner, target: ProofTarget): Promise<string> {
  const { header, claims } = await proofParts(signer.jwk, target);
  return signJws(signer.privateKey, header, claims);
}
