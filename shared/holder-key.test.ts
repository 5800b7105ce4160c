import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { base64url, importHolderKey, isJkt, jwkThumbprint, parseHolderJwk, unbase64url } from "./holder-key.ts";

// RFC 8037 Appendix A.2 public key and A.3 thumbprint.
const RFC8037_X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
const RFC8037_JKT = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";
// The P-256 key of RFC 9449's examples (§4.1) and its jkt (§6.1).
const P256 = {
  kty: "EC",
  x: "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
  y: "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA",
  crv: "P-256",
};
const P256_JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I";

function parsed(value: unknown) {
  const r = parseHolderJwk(value);
  if (!r.ok) throw new Error(r.reason);
  return r.jwk;
}

describe("holder public keys", () => {
  it("computes the RFC 8037 A.3 Ed25519 thumbprint", async () => {
    expect(await jwkThumbprint(parsed({ kty: "OKP", crv: "Ed25519", x: RFC8037_X }))).toBe(RFC8037_JKT);
  });

  it("computes the RFC 9449 P-256 thumbprint, and the same as an independent RFC 7638 hash (node:crypto)", async () => {
    const jwk = parsed({ ...P256, alg: "ES256", kid: "k", ext: true, key_ops: ["verify"], use: "sig" });
    const canonical = JSON.stringify(Object.fromEntries(["crv", "kty", "x", "y"].map((k) => [k, P256[k as "x"]])));
    const independent = createHash("sha256").update(canonical).digest("base64url");
    expect(independent).toBe(P256_JKT);
    expect(await jwkThumbprint(jwk)).toBe(P256_JKT);
    expect(isJkt(P256_JKT)).toBe(true);
  });

  it("refuses private members, unknown types, curves, members and coordinates of the wrong length", () => {
    const ed = { kty: "OKP", crv: "Ed25519", x: RFC8037_X };
    const cases: [unknown, string][] = [
      [{ ...ed, d: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A" }, "private_member"],
      [{ ...P256, d: "x" }, "private_member"],
      [{ kty: "oct", k: "AAAA" }, "private_member"],
      [{ kty: "RSA", n: "AQAB", e: "AQAB" }, "unknown_kty"],
      [{ ...ed, p: "x" }, "private_member"],
      [{ ...ed, crv: "X25519" }, "unknown_crv"],
      [{ ...P256, crv: "P-384" }, "unknown_crv"],
      [{ ...ed, y: P256.y }, "unknown_member"],
      [{ ...ed, x5c: [] }, "unknown_member"],
      [{ ...ed, x: RFC8037_X.slice(1) }, "bad_coordinate"],
      [{ ...ed, x: `${RFC8037_X}A` }, "bad_coordinate"],
      [{ ...ed, x: `${RFC8037_X.slice(0, 42)}p` }, "bad_coordinate"], // stray low bits: not canonical
      [{ ...P256, y: undefined }, "bad_coordinate"],
      [{ ...ed, x: 7 }, "bad_coordinate"],
      [null, "not_object"],
      [[ed], "not_object"],
      ["key", "not_object"],
    ];
    for (const [value, reason] of cases) expect(parseHolderJwk(value)).toEqual({ ok: false, reason });
  });

  it("imports a valid point and refuses one off the curve", async () => {
    expect(await importHolderKey(parsed(P256))).not.toBeNull();
    expect(await importHolderKey(parsed({ kty: "OKP", crv: "Ed25519", x: RFC8037_X }))).not.toBeNull();
    const offCurve = parsed({ ...P256, y: P256.x });
    expect(await importHolderKey(offCurve)).toBeNull();
  });

  it("base64url round-trips every length and refuses padding and other alphabets", () => {
    for (let n = 0; n < 40; n++) {
      const bytes = crypto.getRandomValues(new Uint8Array(n));
      const text = base64url(bytes);
      expect(text).toBe(Buffer.from(bytes).toString("base64url"));
      expect(unbase64url(text)).toEqual(bytes);
    }
    for (const bad of ["AA==", "A+", "A/", "A", "AAAAA", "A A"]) expect(unbase64url(bad)).toBeNull();
  });
});
