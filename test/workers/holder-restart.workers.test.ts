/**
 * Replay protection across a restart of a holder-bound cap's object (issue
 * 20): the jtis live in memory, so a restarted object (a fresh HolderProofs
 * over the same storage) must still refuse every proof its last life admitted,
 * by the durable mark, while a proof made after the mark passes.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CapRecord } from "../../durable-objects/cap-record.ts";
import { HolderProofs } from "../../durable-objects/holder-binding.ts";
import { jwkThumbprint, parseHolderJwk } from "../../shared/holder-key.ts";
import { signProof } from "../../shared/holder-proof-sign.ts";
import { capObject } from "./slow-upload.ts";
import { call, mintRoot, ORIGIN } from "./vault.ts";

describe("holder-bound caps across a restart of the object", () => {
  it("a restarted object refuses the proofs its last life admitted (401), and admits one made after the mark", async () => {
    const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"])) as CryptoKeyPair;
    const parsed = parseHolderJwk(await crypto.subtle.exportKey("jwk", pair.publicKey));
    if (!parsed.ok) throw new Error(parsed.reason);
    const signer = { privateKey: pair.privateKey, jwk: parsed.jwk };
    const root = await mintRoot(`holder-restart/${crypto.randomUUID()}/`, { holder: parsed.jwk });
    const jkt = await jwkThumbprint(parsed.jwk);
    const iat = Math.floor(Date.now() / 1000);
    const url = `${ORIGIN}/object/${root.token}`;
    const proof = await signProof(signer, { method: "GET", url, token: root.token, body: null, iat, jti: "once" });
    expect((await call("GET", url, { headers: { dpop: proof } })).status).toBe(200);

    await runInDurableObject(await capObject(root.token), async (_instance, state) => {
      const restarted = new HolderProofs(state.storage);
      await restarted.ready();
      const record = { holder: { jkt } } as CapRecord;
      const now = Date.now();
      const admission = (jti: string, at: number) =>
        ({ kind: "proved", jkt, fresh: true, jti, iat: at, replayableUntil: (at + 60) * 1000 }) as const;
      // The same proof again, and another jti from the same second: either could have passed the last life.
      expect(restarted.admit(record, admission("once", iat), now)).toMatchObject({
        ok: false,
        error: { code: "unauthorized" },
      });
      expect(restarted.admit(record, admission("other", iat), now)).toMatchObject({
        ok: false,
        error: { code: "unauthorized" },
      });
      // A proof made once the holder's clock is past the mark is admitted, once.
      const later = iat + 60;
      expect(restarted.admit(record, admission("later", later), later * 1000)).toEqual({ ok: true, value: null });
      expect(restarted.admit(record, admission("later", later), later * 1000)).toMatchObject({ ok: false });
    });
  });
});
