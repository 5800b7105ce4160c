/**
 * The SDK's holder keys and signed requests, checked with the vault's own
 * verifier (shared/holder-proof.ts). Against a running vault: test/workers/holder-binding.workers.test.ts.
 */
import { describe, expect, it } from "vitest";
import { verifyProof } from "../../shared/holder-proof.ts";
import { FsCap, HolderKey } from "./index.ts";
import type { FetchLike } from "./types.ts";

const TOKEN = "abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnop";
const CAP_URL = `http://vault.test:8787/object/${TOKEN}`;

interface Sent {
  request: Request;
  body: Uint8Array;
}

/** A vault stand-in that records what it was sent and answers 200 `{}`. */
function recorder(): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (input, init) => {
    const request = new Request(input, init);
    sent.push({ request, body: new Uint8Array(await request.arrayBuffer()) });
    return new Response(JSON.stringify({ size: 5, etag: '"e"', sha256: "0".repeat(64) }), {
      status: 201,
      headers: { "content-type": "application/json" },
    });
  };
  return { fetch, sent };
}

async function verifySent(sent: Sent, key: HolderKey, hasBody: boolean) {
  const sha256 = new Uint8Array(await crypto.subtle.digest("SHA-256", sent.body));
  return verifyProof({
    proof: sent.request.headers.get("dpop"),
    method: sent.request.method,
    url: sent.request.url,
    token: TOKEN,
    jkt: key.jkt,
    body: hasBody ? { kind: "digest", sha256 } : { kind: "none" },
    now: Date.now(),
  });
}

describe("holder keys", () => {
  it("generates Ed25519 by default with a non-extractable private key", async () => {
    const key = await HolderKey.generate();
    expect(key.publicJwk.kty).toBe("OKP");
    expect(Object.keys(key.publicJwk).sort()).toEqual(["crv", "kty", "x"]);
    await expect(key.exportKeyFile()).rejects.toThrow(/not extractable/);
    expect(JSON.stringify(key)).toBe(JSON.stringify({ jkt: key.jkt }));
  });

  it("round-trips a key file, for both key types, to a key with the same thumbprint", async () => {
    for (const algorithm of ["Ed25519", "P-256"] as const) {
      const key = await HolderKey.generate({ algorithm, extractable: true });
      const file = await key.exportKeyFile();
      expect(typeof file.d).toBe("string");
      const back = await HolderKey.fromKeyFile(JSON.parse(JSON.stringify(file)));
      expect(back.jkt).toBe(key.jkt);
      await expect(back.exportKeyFile()).rejects.toThrow(/not extractable/);
    }
    await expect(HolderKey.fromKeyFile({ kty: "OKP", crv: "Ed25519", x: "x" })).rejects.toThrow(TypeError);
  });
});

describe("a cap with a holder key signs every request", () => {
  it("reads, writes, lists and mints with fresh proofs the vault's verifier accepts", async () => {
    const key = await HolderKey.generate({ algorithm: "P-256" });
    const vault = recorder();
    const fs = new FsCap(CAP_URL, { fetch: vault.fetch, holder: key });
    await fs.write("a.txt", "hello").catch(() => {});
    await fs.stat("a.txt").catch(() => {});
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode("streamed"));
        c.close();
      },
    });
    await fs.write("b.txt", stream, { length: 8 }).catch(() => {});
    const child = await HolderKey.generate();
    await fs.subdir({ path: "inbox", holder: child.publicJwk }).catch(() => {});
    expect(vault.sent.length).toBe(4);
    const [write, stat, streamed, subdir] = vault.sent as [Sent, Sent, Sent, Sent];
    for (const [sent, hasBody] of [
      [write, true],
      [stat, false],
      [streamed, true],
      [subdir, true],
    ] as const) {
      expect((await verifySent(sent, key, hasBody)).ok).toBe(true);
    }
    expect(new TextDecoder().decode(streamed.body)).toBe("streamed");
    expect(JSON.parse(new TextDecoder().decode(subdir.body)).holder).toEqual(child.publicJwk);
    const jtis = new Set(
      vault.sent.map(
        (s) =>
          JSON.parse(atob(s.request.headers.get("dpop")!.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/"))).jti,
      ),
    );
    expect(jtis.size).toBe(4);
  });

  it("sends no proof without a holder key", async () => {
    const vault = recorder();
    await new FsCap(CAP_URL, { fetch: vault.fetch }).stat("a.txt").catch(() => {});
    expect(vault.sent[0]!.request.headers.get("dpop")).toBeNull();
  });
});
