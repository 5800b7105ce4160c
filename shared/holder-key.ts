/**
 * Holder keys: the public key a bound cap names (issue 20). A cap stores only
 * the key's RFC 7638 thumbprint (`jkt`); each use proves possession of the
 * private key with a DPoP proof (shared/holder-proof.ts). Pure WebCrypto, so
 * the same code runs in workerd, Node and browsers.
 */

/** The two key types a holder may use: Ed25519 (EdDSA) and P-256 (ES256). */
export type HolderJwk = { kty: "OKP"; crv: "Ed25519"; x: string } | { kty: "EC"; crv: "P-256"; x: string; y: string };

/** Why a JWK is not a usable public holder key. */
export type HolderKeyRefusal =
  | "not_object"
  | "private_member"
  | "unknown_member"
  | "unknown_kty"
  | "unknown_crv"
  | "bad_coordinate";

export type HolderKeyParse = { ok: true; jwk: HolderJwk } | { ok: false; reason: HolderKeyRefusal };

/**
 * Every private-key member JWK defines (RFC 7517/7518/8037): `d` for EC and OKP,
 * the RSA CRT members, and `k` for symmetric keys. A key carrying any of them is
 * refused outright, so a private key pasted by mistake is never stored or used.
 */
const PRIVATE_MEMBERS = new Set(["d", "p", "q", "dp", "dq", "qi", "oth", "k", "r", "t"]);
/** Public metadata WebCrypto and JOSE libraries add on export; accepted and ignored. */
const METADATA_MEMBERS = new Set(["alg", "use", "kid", "key_ops", "ext"]);
/** Both curves' coordinates are 32 bytes: 43 base64url characters without padding. */
const COORDINATE_CHARS = 43;

const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const B64URL_SHAPE = /^[A-Za-z0-9_-]*$/;

/** base64url without padding (RFC 7515 §2). */
export function base64url(bytes: Uint8Array): string {
  let out = "";
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64URL[n >>> 18]! + B64URL[(n >>> 12) & 63]! + B64URL[(n >>> 6) & 63]! + B64URL[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64URL[n >>> 18]! + B64URL[(n >>> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64URL[n >>> 18]! + B64URL[(n >>> 12) & 63]! + B64URL[(n >>> 6) & 63]!;
  }
  return out;
}

/**
 * The bytes of canonical unpadded base64url, or null. Non-canonical text (stray
 * low bits in the last character) is refused so one value has one spelling.
 */
export function unbase64url(text: string): Uint8Array | null {
  if (!B64URL_SHAPE.test(text) || text.length % 4 === 1) return null;
  const out = new Uint8Array(Math.floor((text.length * 6) / 8));
  let buffer = 0;
  let bits = 0;
  let j = 0;
  for (let i = 0; i < text.length; i++) {
    buffer = ((buffer << 6) | B64URL.indexOf(text[i]!)) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      out[j++] = (buffer >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
  }
  if (bits > 0 && (buffer & ((1 << bits) - 1)) !== 0) return null;
  return out;
}

function coordinate(value: unknown): value is string {
  return typeof value === "string" && value.length === COORDINATE_CHARS && unbase64url(value) !== null;
}

/**
 * A public holder key from untrusted JSON: Ed25519 `{kty:"OKP",crv:"Ed25519",x}`
 * or P-256 `{kty:"EC",crv:"P-256",x,y}`. Private members, unknown members,
 * other key types and curves, and coordinates of the wrong length are refused.
 * Only the shape is checked here; {@link importHolderKey} checks the point.
 */
export function parseHolderJwk(value: unknown): HolderKeyParse {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { ok: false, reason: "not_object" };
  const fields = value as Record<string, unknown>;
  // workerd's exportKey lists every JWK member, unset ones as undefined: those carry nothing.
  const names = Object.keys(fields).filter((n) => fields[n] !== undefined);
  if (names.some((n) => PRIVATE_MEMBERS.has(n))) return { ok: false, reason: "private_member" };
  const { kty, crv, x, y } = fields;
  if (kty === "OKP") {
    if (crv !== "Ed25519") return { ok: false, reason: "unknown_crv" };
    if (names.some((n) => n !== "kty" && n !== "crv" && n !== "x" && !METADATA_MEMBERS.has(n))) {
      return { ok: false, reason: "unknown_member" };
    }
    if (!coordinate(x)) return { ok: false, reason: "bad_coordinate" };
    return { ok: true, jwk: { kty, crv, x } };
  }
  if (kty === "EC") {
    if (crv !== "P-256") return { ok: false, reason: "unknown_crv" };
    if (names.some((n) => n !== "kty" && n !== "crv" && n !== "x" && n !== "y" && !METADATA_MEMBERS.has(n))) {
      return { ok: false, reason: "unknown_member" };
    }
    if (!coordinate(x) || !coordinate(y)) return { ok: false, reason: "bad_coordinate" };
    return { ok: true, jwk: { kty, crv, x, y } };
  }
  return { ok: false, reason: "unknown_kty" };
}

/**
 * The RFC 7638 canonical JSON: the required members only, in lexicographic
 * order, no whitespace. The values are base64url or fixed names, so no
 * character needs escaping.
 */
export function thumbprintInput(jwk: HolderJwk): string {
  return jwk.kty === "OKP"
    ? `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}"}`
    : `{"crv":"${jwk.crv}","kty":"${jwk.kty}","x":"${jwk.x}","y":"${jwk.y}"}`;
}

/** The key's RFC 7638 SHA-256 thumbprint, base64url: the `jkt` a bound cap stores. */
export async function jwkThumbprint(jwk: HolderJwk): Promise<string> {
  const input = thumbprintInput(jwk);
  const known = thumbprints.get(input);
  if (known) return known;
  const jkt = base64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(input))));
  if (thumbprints.size >= MAX_THUMBPRINTS) thumbprints.clear();
  thumbprints.set(input, jkt);
  return jkt;
}

/** Thumbprints by their input (public keys only): every proof names its key, and a holder signs many. Bounded, dropped whole when full. */
const thumbprints = new Map<string, string>();
const MAX_THUMBPRINTS = 256;

/** A jkt's shape: 32 bytes of SHA-256 in base64url. */
export function isJkt(value: unknown): value is string {
  return coordinate(value);
}

/** The WebCrypto algorithm for each key type, used to import and verify. */
export function webCryptoAlgorithm(jwk: HolderJwk): { name: "Ed25519" } | { name: "ECDSA"; namedCurve: "P-256" } {
  return jwk.kty === "OKP" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
}

/**
 * The key imported for verification, or null when it is not a valid public key
 * (a P-256 point off the curve, say). Never rejects.
 */
export async function importHolderKey(jwk: HolderJwk): Promise<CryptoKey | null> {
  try {
    return await crypto.subtle.importKey("jwk", { ...jwk }, webCryptoAlgorithm(jwk), false, ["verify"]);
  } catch {
    return null;
  }
}
