/**
 * Cap tokens: the secret in a cap URL. A token is 20 random bytes followed by
 * the first 10 bytes of HMAC-SHA-256(vault key, those random bytes), in
 * base32. The worker checks the MAC before it addresses any Durable Object:
 * the runtime keeps a file for every object ever addressed, so a name anyone
 * can make up would let anyone fill the disk. Only the token's SHA-256 digest
 * is ever stored or used as a Durable Object name, so a dump of every byte of
 * durable state holds no usable token.
 */
import { refuse } from "./refusals.ts";
import { ok, type Result } from "./result.ts";
import { tokenHmacKey } from "./token-key.ts";

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";
/** 160 random bits: unguessable on their own. */
const RANDOM_BYTES = 20;
/** An 80-bit MAC: forging one takes about 2^80 online tries. */
const MAC_BYTES = 10;
/** 30 bytes = 240 bits: exactly 48 base32 characters, no padding bits. */
const TOKEN_SHAPE = /^[a-z2-7]{48}$/;
/**
 * The shape of every token minted before tokens were signed (state format 0):
 * 20 random bytes, no MAC. None verifies; the worker names them apart only to
 * say how they are re-issued (docs/upgrading.md), never by asking an object.
 */
const LEGACY_TOKEN_SHAPE = /^[a-z2-7]{32}$/;

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

function unbase32(text: string): Uint8Array {
  const out = new Uint8Array(Math.floor((text.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let i = 0;
  for (const ch of text) {
    buffer = ((buffer << 5) | BASE32.indexOf(ch)) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out[i++] = (buffer >>> (bits - 8)) & 0xff;
      bits -= 8;
    }
  }
  return out;
}

async function macOf(key: CryptoKey, random: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, random)).subarray(0, MAC_BYTES);
}

/**
 * A fresh token signed with the vault key `rawKey` (`CAPVAULT_TOKEN_KEY`).
 * Without a usable key nothing is minted: `unavailable`.
 *
 * `bound`: the token of a holder-bound cap. The first random bit says which
 * (under the MAC, so it cannot be flipped), letting the worker skip the
 * holder check for an unbound cap without asking its object. Tokens minted
 * before carry a random bit there: a set one only costs that question.
 */
export async function mintToken(rawKey: string | undefined, bound = false): Promise<Result<string>> {
  const key = await tokenHmacKey(rawKey);
  if (!key) return refuse("noTokenKey");
  const bytes = new Uint8Array(RANDOM_BYTES + MAC_BYTES);
  const random = crypto.getRandomValues(bytes.subarray(0, RANDOM_BYTES));
  random[0] = bound ? random[0]! | 0x80 : random[0]! & 0x7f;
  bytes.set(await macOf(key, random), RANDOM_BYTES);
  return ok(base32(bytes));
}

/**
 * True only for a token this vault minted (under the same key). Malformed and
 * forged tokens, and every token when no key is configured (fail closed),
 * are false; the caller answers them exactly like a revoked one.
 */
export async function verifyToken(token: string, rawKey: string | undefined): Promise<boolean> {
  if (typeof token !== "string" || !TOKEN_SHAPE.test(token)) return false;
  const key = await tokenHmacKey(rawKey);
  if (!key) return false;
  const bytes = unbase32(token);
  const expected = await macOf(key, bytes.subarray(0, RANDOM_BYTES));
  // Constant time: where a guess first differs must not show in the timing.
  let diff = 0;
  for (let i = 0; i < MAC_BYTES; i++) diff |= expected[i]! ^ bytes[RANDOM_BYTES + i]!;
  return diff === 0;
}

/** True for any string of the format-0 token shape, whether or not such a cap ever existed. */
export function isLegacyToken(token: string): boolean {
  return typeof token === "string" && LEGACY_TOKEN_SHAPE.test(token);
}

/**
 * The signed token that re-issues the format-0 cap whose object is named
 * `legacyKey` (docs/upgrading.md): its random part is derived from the vault
 * key and that name, so a re-issue cut short and run again hands out the same
 * token without any token being stored. An unbound token, as format 0 had no
 * holders.
 */
export async function reissuedToken(rawKey: string | undefined, legacyKey: string): Promise<Result<string>> {
  const key = await tokenHmacKey(rawKey);
  if (!key) return refuse("noTokenKey");
  const label = new TextEncoder().encode(`capvault reissue-legacy\0${legacyKey}`);
  const derived = new Uint8Array(await crypto.subtle.sign("HMAC", key, label));
  const bytes = new Uint8Array(RANDOM_BYTES + MAC_BYTES);
  const random = bytes.subarray(0, RANDOM_BYTES);
  random.set(derived.subarray(0, RANDOM_BYTES));
  random[0] = random[0]! & 0x7f;
  bytes.set(await macOf(key, random), RANDOM_BYTES);
  return ok(base32(bytes));
}

/**
 * False only for a token that cannot name a holder-bound cap (its first bit
 * clear, base32 "a" to "p"); true means "ask the cap's object".
 */
export function mayBeBound(token: string): boolean {
  const first = token.charCodeAt(0);
  return !(first >= 0x61 && first <= 0x70);
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
