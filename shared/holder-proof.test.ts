import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { base64url, jwkThumbprint, parseHolderJwk } from "./holder-key.ts";
import {
  IAT_FUTURE_SECONDS,
  IAT_PAST_SECONDS,
  MAX_PROOF_BYTES,
  type ProofBody,
  type ProofRefusal,
  proofRefusalAnswer,
  verifyProof,
} from "./holder-proof.ts";
import { type ProofSigner, proofParts, signJws, signProof } from "./holder-proof-sign.ts";

const TOKEN = "abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnop";
const URL_ = "https://vault.example/object/abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnop/file";
const NOW = 1_800_000_000_000;
const BODY = new TextEncoder().encode("hello, bound world");
const encoder = new TextEncoder();

interface Holder extends ProofSigner {
  jkt: string;
}

async function holder(kind: "Ed25519" | "P-256"): Promise<Holder> {
  const algorithm = kind === "Ed25519" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
  const pair = (await crypto.subtle.generateKey(algorithm, true, ["sign", "verify"])) as CryptoKeyPair;
  const exported: unknown = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const parsed = parseHolderJwk(exported);
  if (!parsed.ok) throw new Error(parsed.reason);
  return { privateKey: pair.privateKey, jwk: parsed.jwk, jkt: await jwkThumbprint(parsed.jwk) };
}

let ed: Holder;
let p256: Holder;
let other: Holder;
beforeAll(async () => {
  ed = await holder("Ed25519");
  p256 = await holder("P-256");
  other = await holder("Ed25519");
});

const sha256 = async (b: Uint8Array) => new Uint8Array(await crypto.subtle.digest("SHA-256", b));

async function check(
  proof: string | null,
  h: Holder,
  opts: { method?: string; url?: string; token?: string; body?: ProofBody; now?: number } = {},
) {
  return verifyProof({
    proof,
    method: opts.method ?? "PUT",
    url: opts.url ?? URL_,
    token: opts.token ?? TOKEN,
    jkt: h.jkt,
    body: opts.body ?? { kind: "digest", sha256: await sha256(BODY) },
    now: opts.now ?? NOW,
  });
}

const target = { method: "PUT", url: URL_, token: TOKEN, body: BODY, iat: NOW / 1000 };

/** A proof signed by `h` whose header and claims `edit` changed first. */
async function signedWith(
  h: Holder,
  edit: (header: Record<string, unknown>, claims: Record<string, unknown>) => void,
): Promise<string> {
  const { header, claims } = await proofParts(h.jwk, target);
  edit(header, claims);
  return signJws(h.privateKey, header, claims);
}

async function refusedWith(proof: string | null, h: Holder, reason: ProofRefusal, opts = {}) {
  expect(await check(proof, h, opts)).toEqual({ ok: false, reason });
}

describe("DPoP proof verification", () => {
  it("accepts a valid proof by either key type and hands back the jkt and jti", async () => {
    for (const h of [ed, p256]) {
      const r = await check(await signProof(h, { ...target, jti: "once-1" }), h);
      expect(r).toEqual({ ok: true, value: { jkt: h.jkt, jti: "once-1", iat: NOW / 1000, claimedDigest: null } });
    }
    // No body: no content_digest needed; the query is not part of htu.
    const get = await signProof(ed, { ...target, method: "GET", body: null, url: `${URL_}?path=a` });
    expect((await check(get, ed, { method: "GET", body: { kind: "none" }, url: `${URL_}?path=b` })).ok).toBe(true);
    // A streamed body returns the claimed digest for the caller to compare at its end.
    const streamed = await check(await signProof(ed, target), ed, { body: { kind: "streamed" } });
    expect(streamed.ok && streamed.value.claimedDigest).toEqual(await sha256(BODY));
  });

  it("compares htu after normalisation (scheme and host case, default port, percent-escapes)", async () => {
    const proof = await signedWith(ed, (_, c) => {
      c.htu = "HTTPS://Vault.Example:443/object/abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnop/%66ile";
    });
    expect((await check(proof, ed)).ok).toBe(true);
    const escaped = await signedWith(ed, (_, c) => {
      c.htu = "https://vault.example/a%2fb";
    });
    expect((await check(escaped, ed, { url: "https://vault.example/a%2Fb" })).ok).toBe(true);
    await refusedWith(escaped, ed, "wrong_htu", { url: "https://vault.example/a/b" });
  });

  it("refuses the explicit hostile cases with the reason a caller maps to its answer", async () => {
    const none = `${base64url(encoder.encode(JSON.stringify({ typ: "dpop+jwt", alg: "none", jwk: ed.jwk })))}.${base64url(encoder.encode("{}"))}.`;
    await refusedWith(none, ed, "malformed");
    const noneSigned = await signedWith(ed, (h) => {
      h.alg = "none";
    });
    await refusedWith(noneSigned, ed, "bad_alg");
    // HS256 "signed" with the public key's bytes as the MAC key: the classic confusion.
    const hsKey = await crypto.subtle.importKey(
      "raw",
      encoder.encode(ed.jwk.x),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign"],
    );
    const { header, claims } = await proofParts(ed.jwk, target);
    const input = `${base64url(encoder.encode(JSON.stringify({ ...header, alg: "HS256" })))}.${base64url(encoder.encode(JSON.stringify(claims)))}`;
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", hsKey, encoder.encode(input)));
    await refusedWith(`${input}.${base64url(mac)}`, ed, "bad_alg");
    await refusedWith(
      await signedWith(ed, (h) => {
        h.alg = "ES256";
      }),
      ed,
      "bad_alg",
    );
    await refusedWith(
      await signedWith(ed, (h) => {
        h.jwk = { ...ed.jwk, d: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A" };
      }),
      ed,
      "bad_jwk",
    );
    await refusedWith(
      await signedWith(ed, (h) => {
        h.typ = "JWT";
      }),
      ed,
      "bad_typ",
    );
    await refusedWith(
      await signedWith(ed, (h) => {
        h.crit = ["exp"];
      }),
      ed,
      "malformed",
    );
    await refusedWith(
      await signedWith(ed, (_, c) => {
        delete c.ath;
      }),
      ed,
      "wrong_ath",
    );
    await refusedWith(
      await signedWith(ed, (_, c) => {
        delete c.content_digest;
      }),
      ed,
      "wrong_digest",
    );
    await refusedWith(
      await signedWith(ed, (_, c) => {
        c.iat = NOW / 1000 - IAT_PAST_SECONDS - 1;
      }),
      ed,
      "stale",
    );
    await refusedWith(
      await signedWith(ed, (_, c) => {
        c.iat = NOW / 1000 + IAT_FUTURE_SECONDS + 1;
      }),
      ed,
      "stale",
    );
    // The window's edges are inside it.
    for (const iat of [NOW / 1000 - IAT_PAST_SECONDS, NOW / 1000 + IAT_FUTURE_SECONDS]) {
      expect((await check(await signProof(ed, { ...target, iat }), ed)).ok).toBe(true);
    }
    await refusedWith(null, ed, "no_proof");
    await refusedWith("", ed, "no_proof");
    await refusedWith(await signProof(other, target), ed, "wrong_key");
    await refusedWith(await signProof(ed, target), p256, "wrong_key");
    const valid = await signProof(ed, target);
    await refusedWith(`${valid}, ${valid}`, ed, "malformed"); // two DPoP headers
    await refusedWith(`${valid}${"A".repeat(MAX_PROOF_BYTES)}`, ed, "malformed");
    await refusedWith(await signProof(ed, target), ed, "wrong_digest", {
      body: { kind: "digest", sha256: await sha256(encoder.encode("other")) },
    });
    await refusedWith(await signProof(ed, target), ed, "wrong_htm", { method: "POST" });
    await refusedWith(await signProof(ed, target), ed, "wrong_ath", { token: TOKEN.replace("a", "b") });
  });

  it("maps exactly the reasons anyone without the key can cause to the unknown-cap answer", () => {
    const leak: ProofRefusal[] = [
      "no_proof",
      "malformed",
      "bad_typ",
      "bad_alg",
      "bad_jwk",
      "wrong_key",
      "bad_signature",
    ];
    for (const r of leak) expect(proofRefusalAnswer(r)).toBe("unknown_cap");
    const held: ProofRefusal[] = [
      "stale",
      "bad_jti",
      "replayed",
      "wrong_htm",
      "wrong_htu",
      "wrong_ath",
      "wrong_digest",
    ];
    for (const r of held) expect(proofRefusalAnswer(r)).toBe("invalid_proof");
  });
});

/** For each field: values that make it wrong (or `undefined`: removed), and the reason expected. */
const HEADER_MUTATIONS: Record<string, [fc.Arbitrary<unknown>, ProofRefusal]> = {
  typ: [
    fc.oneof(
      fc.constant(undefined),
      fc.string().filter((s) => s !== "dpop+jwt"),
    ),
    "bad_typ",
  ],
  alg: [
    fc.oneof(fc.constant(undefined), fc.constantFrom("none", "HS256", "RS256", "ES384", "Ed25519", "eddsa")),
    "bad_alg",
  ],
  jwk: [fc.oneof(fc.constant(undefined), fc.constant(null), fc.string(), fc.constant({ kty: "OKP" })), "bad_jwk"],
};
const CLAIM_MUTATIONS: Record<string, [fc.Arbitrary<unknown>, ProofRefusal]> = {
  jti: [fc.oneof(fc.constant(undefined), fc.integer(), fc.constant(""), fc.constant("x".repeat(129))), "bad_jti"],
  htm: [fc.oneof(fc.constant(undefined), fc.constantFrom("GET", "POST", "put", "DELETE", "")), "wrong_htm"],
  htu: [
    fc.oneof(
      fc.constant(undefined),
      fc.constantFrom(`${URL_}x`, "https://other.example/object/x/file", URL_.replace("https", "http"), 7),
    ),
    "wrong_htu",
  ],
  iat: [
    fc.oneof(
      fc.constant(undefined),
      fc.constant("1800000000"),
      fc.integer({ min: 1, max: 10_000 }).map((d) => NOW / 1000 - IAT_PAST_SECONDS - d),
      fc.integer({ min: 1, max: 10_000 }).map((d) => NOW / 1000 + IAT_FUTURE_SECONDS + d),
    ),
    "stale",
  ],
  ath: [fc.oneof(fc.constant(undefined), fc.string({ maxLength: 50 })), "wrong_ath"],
  content_digest: [
    fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 60 }),
      fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => `sha-256=:${btoa(String.fromCharCode(...b))}:`),
    ),
    "wrong_digest",
  ],
};

describe("DPoP proof properties", () => {
  it("a valid proof passes, whatever its jti and iat inside the window", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.stringMatching(/^[\x21-\x7e]{1,128}$/),
        fc.integer({ min: -IAT_PAST_SECONDS, max: IAT_FUTURE_SECONDS }),
        fc.boolean(),
        async (jti, offset, useP256) => {
          const h = useP256 ? p256 : ed;
          const r = await check(await signProof(h, { ...target, jti, iat: NOW / 1000 + offset }), h);
          expect(r.ok && r.value.jti).toBe(jti);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("any one header field or claim changed to a wrong value or removed, and re-signed by the holder, is refused", async () => {
    const fields = [
      ...Object.entries(HEADER_MUTATIONS).map(([f, m]) => ({ where: "header" as const, f, m })),
      ...Object.entries(CLAIM_MUTATIONS).map(([f, m]) => ({ where: "claims" as const, f, m })),
    ];
    for (const { where, f, m } of fields) {
      const [values, reason] = m;
      await fc.assert(
        fc.asyncProperty(values, fc.boolean(), async (value, useP256) => {
          const h = useP256 ? p256 : ed;
          const proof = await signedWith(h, (header, claims) => {
            const target = where === "header" ? header : claims;
            if (value === undefined) delete target[f];
            else target[f] = value;
          });
          expect(await check(proof, h)).toEqual({ ok: false, reason });
        }),
        { numRuns: 25 },
      );
    }
  });

  it("any one character of a valid proof changed is refused", async () => {
    const proofs = { ed: await signProof(ed, target), p256: await signProof(p256, target) };
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.nat(), fc.constantFrom(...alphabet), async (useP256, at, ch) => {
        const h = useP256 ? p256 : ed;
        const proof = useP256 ? proofs.p256 : proofs.ed;
        const i = at % proof.length;
        fc.pre(proof[i] !== ch);
        const changed = proof.slice(0, i) + ch + proof.slice(i + 1);
        const r = await check(changed, h);
        expect(r.ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("a proof by another key is refused as wrong_key whatever it says", async () => {
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(/^[\x21-\x7e]{1,32}$/), async (jti) => {
        await refusedWith(await signProof(other, { ...target, jti }), ed, "wrong_key");
        await refusedWith(await signProof(p256, { ...target, jti }), ed, "wrong_key");
      }),
      { numRuns: 20 },
    );
  });
});
