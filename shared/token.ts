/**
 * Cap tokens: the secret in a cap URL. Only their SHA-256 digest is ever stored
 * or used as a Durable Object name, so a dump of every byte of durable state
 * holds no usable token.
 */

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
/** 20 random bytes = 160 bits, which encode to exactly 32 base32 characters. */
const TOKEN_BYTES = 20;
const TOKEN_SHAPE = /^[a-z2-7]{32}$/;

/** Lowercase RFC 4648 base32 without padding. */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh token with 160 bits from `crypto.getRandomValues`. */
export function newToken(): string {
  return base32(crypto.getRandomValues(new Uint8Array(TOKEN_BYTES)));
}

/** Cheap shape check so malformed tokens never reach a Durable Object. */
export function isTokenShaped(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

/** What may be kept about a token: its digest (to address its object) and its public id. */
export interface TokenDigest {
  /** Hex SHA-256 of the token: the Durable Object name. Private to the vault. */
  readonly key: string;
  /** First 80 bits of the digest in base32: safe to show, log and audit. */
  readonly id: string;
}

export async function digestToken(token: string): Promise<TokenDigest> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  return { key: hex(digest), id: base32(digest.subarray(0, 10)) };
}

/**
 * Compares two secrets without leaking where they differ. Both sides are
 * hashed first so the comparison also hides their lengths.
 */
export async function secretsEqual(a: string, b: string): Promise<boolean> {
  const enc = new TextEncoder();
  const [da, db] = await Promise.all([
    crypto.subtle.digest("SHA-256", enc.encode(a)),
    crypto.subtle.digest("SHA-256", enc.encode(b)),
  ]);
  const x = new Uint8Array(da);
  const y = new Uint8Array(db);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
