/**
 * The OAuth secrets (codes, access and refresh tokens): random, stored only
 * as digests, each sealing the child cap it stands for (AES-GCM under a key
 * derived from the secret, as workers-oauth-provider wraps its grants'
 * props), so the registry's storage alone opens no cap.
 */

const enc = new TextEncoder();

function b64url(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function unb64url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const bin = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}

/**
 * A fresh secret: `kind` then 256 random bits. The `_` keeps it from ever
 * parsing as a cap token (base32 only), so it opens nothing at `/cap` or `/object`.
 */
export function newSecret(kind: "cvc" | "cva" | "cvr"): string {
  return `${kind}_${b64url(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** Public identifiers (client ids, grant ids): random, not secret. */
export function newId(): string {
  return b64url(crypto.getRandomValues(new Uint8Array(16)));
}

/** What the registry keys a secret by. */
export async function secretDigest(secret: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(`capvault-oauth-id:${secret}`)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

async function sealKey(secret: string): Promise<CryptoKey> {
  const raw = await crypto.subtle.digest("SHA-256", enc.encode(`capvault-oauth-seal:${secret}`));
  return crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/** `value` encrypted under `secret`: only a holder of the secret can open it. */
export async function seal(secret: string, value: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await sealKey(secret), enc.encode(value)),
  );
  return `${b64url(iv)}.${b64url(data)}`;
}

/** The sealed value, or null when `secret` is not the one it was sealed under. */
export async function unseal(secret: string, sealed: string): Promise<string | null> {
  const [iv, data] = sealed.split(".").map(unb64url);
  if (!iv || !data) return null;
  try {
    const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv }, await sealKey(secret), data);
    return new TextDecoder().decode(plain);
  } catch {
    return null;
  }
}

/** PKCE S256 (RFC 7636 §4.2): BASE64URL(SHA256(ASCII(code_verifier))). */
export async function s256(verifier: string): Promise<string> {
  return b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(verifier))));
}

/** Compares two strings in time that does not depend on where they differ. */
export async function sameSecret(a: string, b: string): Promise<boolean> {
  const [da, db] = await Promise.all([a, b].map((s) => crypto.subtle.digest("SHA-256", enc.encode(s))));
  const x = new Uint8Array(da!);
  const y = new Uint8Array(db!);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= x[i]! ^ y[i]!;
  return diff === 0;
}
