/**
 * DPoP-bound OAuth tokens (RFC 9449 §5, §7) against the real worker: a token
 * request with a proof gets `token_type: "DPoP"` tokens bound to its key; the
 * refresh needs a proof by that key; /mcp takes such a token only as
 * `Authorization: DPoP` with a fresh proof naming it (`ath`). A leaked bound
 * token, or a bearer use of one, opens nothing.
 */
import { describe, expect, it } from "vitest";
import { type HolderJwk, parseHolderJwk } from "../../shared/holder-key.ts";
import { proofParts, signJws } from "../../shared/holder-proof-sign.ts";
import { call, cap, mintRoot, ORIGIN } from "./vault.ts";

const REDIRECT = "https://client.example/callback";
const RESOURCE = `${ORIGIN}/mcp`;
const TOKEN_URL = `${ORIGIN}/oauth/token`;

interface Key {
  privateKey: CryptoKey;
  jwk: HolderJwk;
}

async function newKey(kind: "Ed25519" | "P-256"): Promise<Key> {
  const algorithm = kind === "Ed25519" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
  const pair = (await crypto.subtle.generateKey(algorithm, false, ["sign", "verify"])) as CryptoKeyPair;
  const parsed = parseHolderJwk(await crypto.subtle.exportKey("jwk", pair.publicKey));
  if (!parsed.ok) throw new Error(parsed.reason);
  return { privateKey: pair.privateKey, jwk: parsed.jwk };
}

type Edit = (claims: Record<string, unknown>) => void;

/** A proof for `url`: with `ath` when it presents `token`, without at the token endpoint (RFC 9449 §4.2). */
async function proof(key: Key, url: string, token: string | null, edit?: Edit): Promise<string> {
  const { header, claims } = await proofParts(key.jwk, { method: "POST", url, token: token ?? "", body: null });
  if (token === null) delete claims.ath;
  edit?.(claims);
  return signJws(key.privateKey, header, claims);
}

const b64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

const form = (fields: Record<string, string | string[]>, headers: Record<string, string> = {}) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return { headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: body.toString() };
};

interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
}

let counter = 0;
/** A registered client, consent given for `docs` (read + list), and its code. */
async function consented() {
  const root = cap((await mintRoot(`oauth-dpop-${Date.now()}-${++counter}/`)).token);
  expect((await root.write("docs/a.txt", "bound read")).status).toBe(201);
  const registered = await call("POST", "/oauth/register", {
    json: { redirect_uris: [REDIRECT], client_name: "DPoP client" },
  });
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  const approved = await call("POST", "/oauth/authorize", {
    ...form({
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "s",
      resource: RESOURCE,
      cap: root.token,
      path: "docs",
      rights: ["read", "list"],
      ttl: "86400",
      decision: "approve",
    }),
    redirect: "manual",
  });
  expect(approved.status).toBe(302);
  const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
  return { root, clientId, verifier, code };
}

function exchange(flow: Awaited<ReturnType<typeof consented>>, dpop?: string) {
  return call(
    "POST",
    "/oauth/token",
    form(
      {
        grant_type: "authorization_code",
        code: flow.code,
        redirect_uri: REDIRECT,
        client_id: flow.clientId,
        code_verifier: flow.verifier,
        resource: RESOURCE,
      },
      dpop ? { dpop } : {},
    ),
  );
}

function refresh(clientId: string, refreshToken: string, dpop?: string) {
  return call(
    "POST",
    "/oauth/token",
    form({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }, dpop ? { dpop } : {}),
  );
}

const readA = {
  jsonrpc: "2.0",
  id: 2,
  method: "tools/call",
  params: { name: "read_text_file", arguments: { path: "a.txt" } },
};

function mcp(authorization: string, dpop?: string) {
  const headers: Record<string, string> = { accept: "application/json, text/event-stream", authorization };
  if (dpop) headers.dpop = dpop;
  return call("POST", "/mcp", { headers, json: readA });
}

async function readText(res: Response): Promise<string> {
  expect(res.status).toBe(200);
  return ((await res.json()) as { result: { content: { text: string }[] } }).result.content[0]!.text;
}

async function oauthErrorOf(res: Response): Promise<[number, string]> {
  return [res.status, ((await res.json()) as { error: string }).error];
}

describe("DPoP-bound OAuth tokens", () => {
  it("are advertised in both metadata documents", async () => {
    for (const path of ["/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource/mcp"]) {
      const meta = (await (await call("GET", path)).json()) as Record<string, unknown>;
      expect(meta.dpop_signing_alg_values_supported, path).toEqual(["EdDSA", "ES256"]);
    }
  });

  it.each(["Ed25519", "P-256"] as const)(
    "are issued for a proof's key and used at /mcp only with a fresh proof by it (%s)",
    async (kind) => {
      const key = await newKey(kind);
      const other = await newKey(kind);
      const flow = await consented();
      const res = await exchange(flow, await proof(key, TOKEN_URL, null));
      expect(res.status).toBe(200);
      const tokens = (await res.json()) as Tokens;
      expect(tokens.token_type).toBe("DPoP");
      const access = tokens.access_token;

      const good = await proof(key, RESOURCE, access);
      expect(await readText(await mcp(`DPoP ${access}`, good))).toBe("bound read");
      // A bearer use of the bound token, with or without a proof, is an unknown token.
      expect(await oauthErrorOf(await mcp(`Bearer ${access}`))).toEqual([401, "invalid_token"]);
      expect(await oauthErrorOf(await mcp(`Bearer ${access}`, await proof(key, RESOURCE, access)))).toEqual([
        401,
        "invalid_token",
      ]);
      // A thief holding the token but not the key: no proof, or a proof by a key of its own.
      expect(await oauthErrorOf(await mcp(`DPoP ${access}`))).toEqual([401, "invalid_token"]);
      expect(await oauthErrorOf(await mcp(`DPoP ${access}`, await proof(other, RESOURCE, access)))).toEqual([
        401,
        "invalid_token",
      ]);
      // Nor can a thief's own stale proof tell a live bound token from an unknown one.
      const staleOwn = await proof(other, RESOURCE, access, (c) => {
        c.iat = Math.floor(Date.now() / 1000) - 600;
      });
      expect(await oauthErrorOf(await mcp(`DPoP ${access}`, staleOwn))).toEqual([401, "invalid_token"]);
      // The holder's own bad proofs: replayed, for another URL, without the token's hash, stale.
      const replayed = await mcp(`DPoP ${access}`, good);
      expect(replayed.headers.get("www-authenticate")).toBe('DPoP algs="EdDSA ES256", error="invalid_dpop_proof"');
      expect(await oauthErrorOf(replayed)).toEqual([401, "invalid_dpop_proof"]);
      for (const edit of [
        (c: Record<string, unknown>) => {
          c.htu = TOKEN_URL;
        },
        (c: Record<string, unknown>) => {
          delete c.ath;
        },
        (c: Record<string, unknown>) => {
          c.iat = Math.floor(Date.now() / 1000) - 600;
        },
      ]) {
        expect(await oauthErrorOf(await mcp(`DPoP ${access}`, await proof(key, RESOURCE, access, edit)))).toEqual([
          401,
          "invalid_dpop_proof",
        ]);
      }
      expect(await readText(await mcp(`DPoP ${access}`, await proof(key, RESOURCE, access)))).toBe("bound read");
    },
  );

  it("refresh only with a proof by the same key; a refused refresh changes nothing", async () => {
    const key = await newKey("Ed25519");
    const other = await newKey("Ed25519");
    const flow = await consented();
    const tokens = (await (await exchange(flow, await proof(key, TOKEN_URL, null))).json()) as Tokens;
    // Without the key (no proof, or a thief's own) the refresh answers as an unknown token would.
    expect(await oauthErrorOf(await refresh(flow.clientId, tokens.refresh_token))).toEqual([400, "invalid_grant"]);
    expect(
      await oauthErrorOf(await refresh(flow.clientId, tokens.refresh_token, await proof(other, TOKEN_URL, null))),
    ).toEqual([400, "invalid_grant"]);
    const unknown = await refresh(flow.clientId, `cvr_${"A".repeat(43)}`, await proof(other, TOKEN_URL, null));
    expect(await oauthErrorOf(unknown)).toEqual([400, "invalid_grant"]);
    // Neither attempt rotated, nor ended the grant: the access token still works, and so does the holder's refresh.
    expect(
      await readText(await mcp(`DPoP ${tokens.access_token}`, await proof(key, RESOURCE, tokens.access_token))),
    ).toBe("bound read");
    const rotated = await refresh(flow.clientId, tokens.refresh_token, await proof(key, TOKEN_URL, null));
    expect(rotated.status).toBe(200);
    const next = (await rotated.json()) as Tokens;
    expect(next.token_type).toBe("DPoP");
    expect(await readText(await mcp(`DPoP ${next.access_token}`, await proof(key, RESOURCE, next.access_token)))).toBe(
      "bound read",
    );
    expect(await oauthErrorOf(await mcp(`Bearer ${next.access_token}`))).toEqual([401, "invalid_token"]);
  });

  it("a token request with a bad proof is refused before the code is spent; a proof is used once", async () => {
    const key = await newKey("P-256");
    const flow = await consented();
    const wrongUrl = await proof(key, TOKEN_URL, null, (c) => {
      c.htu = `${ORIGIN}/oauth/authorize`;
    });
    expect(await oauthErrorOf(await exchange(flow, wrongUrl))).toEqual([400, "invalid_dpop_proof"]);
    expect(await oauthErrorOf(await exchange(flow, "not.a.proof"))).toEqual([400, "invalid_dpop_proof"]);
    const good = await proof(key, TOKEN_URL, null);
    const res = await exchange(flow, good);
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Tokens;
    expect(await oauthErrorOf(await refresh(flow.clientId, tokens.refresh_token, good))).toEqual([
      400,
      "invalid_dpop_proof",
    ]);
  });

  it("a bearer grant stays bearer: its token is refused under the DPoP scheme", async () => {
    const flow = await consented();
    const tokens = (await (await exchange(flow)).json()) as Tokens;
    expect(tokens.token_type).toBe("Bearer");
    const key = await newKey("Ed25519");
    expect(
      await oauthErrorOf(await mcp(`DPoP ${tokens.access_token}`, await proof(key, RESOURCE, tokens.access_token))),
    ).toEqual([401, "invalid_token"]);
    expect(await readText(await mcp(`Bearer ${tokens.access_token}`))).toBe("bound read");
  });
});
