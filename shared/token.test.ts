import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { base32, isLegacyToken, mayBeBound, mintToken, reissuedToken, verifyToken } from "./token.ts";

const KEY = randomBytes(32).toString("base64url");

async function minted(key = KEY): Promise<string> {
  const token = await mintToken(key);
  if (!token.ok) throw new Error(token.error.message);
  return token.value;
}

describe("signed cap tokens", () => {
  it("mints 48 base32 characters that verify under the same key only", async () => {
    const token = await minted();
    expect(token).toMatch(/^[a-z2-7]{48}$/);
    expect(await verifyToken(token, KEY)).toBe(true);
    expect(await verifyToken(token, randomBytes(32).toString("base64url"))).toBe(false);
    expect(await minted()).not.toBe(token);
  });

  it("refuses every token that differs in one character, random ones, and the old 32-character shape", async () => {
    const token = await minted();
    for (let i = 0; i < token.length; i++) {
      const other = token[i] === "a" ? "b" : "a";
      expect(await verifyToken(token.slice(0, i) + other + token.slice(i + 1), KEY)).toBe(false);
    }
    for (let i = 0; i < 200; i++) expect(await verifyToken(base32(randomBytes(30)), KEY)).toBe(false);
    expect(await verifyToken(base32(randomBytes(20)), KEY)).toBe(false);
    for (const bad of ["", token.toUpperCase(), token + "a", token.slice(1), `${token.slice(0, 47)}=`, `${token}\n`]) {
      expect(await verifyToken(bad, KEY)).toBe(false);
    }
  });

  it("fails closed without a usable key: nothing verifies, nothing is minted", async () => {
    const token = await minted();
    for (const key of [undefined, "", "short", randomBytes(31).toString("base64url"), `${KEY}!`]) {
      expect(await verifyToken(token, key)).toBe(false);
      const refused = await mintToken(key);
      expect(refused.ok ? "minted" : refused.error.code).toBe("unavailable");
    }
  });
});

describe("format-0 tokens and their re-issue", () => {
  it("names every 32-character base32 string a format-0 token, and nothing else", () => {
    expect(isLegacyToken(base32(randomBytes(20)))).toBe(true);
    expect(isLegacyToken("a".repeat(32))).toBe(true);
    for (const other of [
      "a".repeat(31),
      "a".repeat(33),
      "A".repeat(32),
      `${"a".repeat(31)}1`,
      base32(randomBytes(30)),
      "",
    ])
      expect(isLegacyToken(other), other).toBe(false);
  });

  it("re-issues a format-0 cap as a signed, unbound token that the same vault key and name always give", async () => {
    const legacyKey = randomBytes(32).toString("hex");
    const token = await reissuedToken(KEY, legacyKey);
    if (!token.ok) throw new Error(token.error.message);
    expect(token.value).toMatch(/^[a-z2-7]{48}$/);
    expect(await verifyToken(token.value, KEY)).toBe(true);
    expect(mayBeBound(token.value)).toBe(false);
    expect(await reissuedToken(KEY, legacyKey)).toEqual(token);
    // Another cap, or another vault's key, gives another token.
    const other = await reissuedToken(KEY, randomBytes(32).toString("hex"));
    const elsewhere = await reissuedToken(randomBytes(32).toString("base64url"), legacyKey);
    expect(other.ok && other.value).not.toBe(token.value);
    expect(elsewhere.ok && elsewhere.value).not.toBe(token.value);
    const keyless = await reissuedToken(undefined, legacyKey);
    expect(keyless.ok ? "minted" : keyless.error.code).toBe("unavailable");
  });
});
