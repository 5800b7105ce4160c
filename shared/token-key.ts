/**
 * The vault key that signs cap tokens (`CAPVAULT_TOKEN_KEY`): at least 32
 * bytes, written in base64url. Whoever holds it can make tokens the worker
 * will look up, so it is a secret like the admin token; it never signs
 * anything else.
 */

export const MIN_TOKEN_KEY_BYTES = 32;

/** The key's bytes, or `null` when it is absent or too weak: then no token verifies and none is minted. */
export function tokenKeyBytes(raw: string | undefined): Uint8Array | null {
  if (typeof raw !== "string") return null;
  const text = raw.trim().replace(/=+$/, "");
  if (!/^[A-Za-z0-9_-]+$/.test(text) || text.length % 4 === 1) return null;
  let binary: string;
  try {
    binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  } catch {
    return null;
  }
  const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
  return bytes.length >= MIN_TOKEN_KEY_BYTES ? bytes : null;
}

/** The last key imported, by the text it came from: the key is the same for the life of an isolate. */
let imported: { raw: string; key: CryptoKey | null } | null = null;

/**
 * The key as an HMAC-SHA-256 key for WebCrypto (workerd, Node and browsers
 * alike). Imported once per isolate and kept: every request verifies a token,
 * and importing on each one cost about 5% of a route's CPU in a profile. The
 * resolved key is kept, never the promise (workerd forbids sharing a promise
 * between requests); two first requests may both import, which is harmless.
 */
export async function tokenHmacKey(raw: string | undefined): Promise<CryptoKey | null> {
  if (typeof raw === "string" && imported?.raw === raw) return imported.key;
  const bytes = tokenKeyBytes(raw);
  const key = bytes
    ? await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"])
    : null;
  if (typeof raw === "string") imported = { raw, key };
  return key;
}

/**
 * A public fingerprint of the token key: 128 bits of SHA-256 over a fixed
 * label and the key's bytes, so two vaults can tell whether they sign alike
 * without either showing its key. `null` without a usable key.
 */
export async function tokenKeyFingerprint(raw: string | undefined): Promise<string | null> {
  const bytes = tokenKeyBytes(raw);
  if (!bytes) return null;
  const label = new TextEncoder().encode("capvault token key fingerprint\0");
  const input = new Uint8Array(label.length + bytes.length);
  input.set(label);
  input.set(bytes, label.length);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", input));
  return Array.from(digest.subarray(0, 16), (b) => b.toString(16).padStart(2, "0")).join("");
}
