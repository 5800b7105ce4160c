/**
 * Holder-bound caps (issue 20) on every surface past the file routes, in real
 * workerd: versions, watch (SSE and WebSocket), the memory tool, MCP, RPC
 * (batch and WebSocket), children/tree/audit/info/revoke, and the tokenless
 * `/cap/...` routes that carry the token in `Authorization`. One table: each
 * row is served to its holder, answers a leaked URL (no proof, another key's
 * proof) byte for byte like an unknown token, and tells the holder its
 * replayed proof is invalid (401).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { CapEndpoint } from "../../cli/mcp-bridge/cap-endpoint.ts";
import { HolderKey } from "../../clients/typescript/holder.ts";
import { type HolderJwk, jwkThumbprint, parseHolderJwk } from "../../shared/holder-key.ts";
import { proofParts, signJws, signProof } from "../../shared/holder-proof-sign.ts";
import { base32 } from "../../shared/token.ts";
import type { VersionPage } from "../../shared/wire-types.ts";
import { call, mintRoot, ORIGIN } from "./vault.ts";

interface Key {
  privateKey: CryptoKey;
  jwk: HolderJwk;
  jkt: string;
}

async function newKey(): Promise<Key> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"])) as CryptoKeyPair;
  const parsed = parseHolderJwk(await crypto.subtle.exportKey("jwk", pair.publicKey));
  if (!parsed.ok) throw new Error(parsed.reason);
  return { privateKey: pair.privateKey, jwk: parsed.jwk, jkt: await jwkThumbprint(parsed.jwk) };
}

const enc = new TextEncoder();
const forged = () => base32(crypto.getRandomValues(new Uint8Array(30)));

interface Row {
  name: string;
  method: "GET" | "POST" | "PUT" | "DELETE";
  /** After `/object/<token>`, query included; `{v}` is a version id of `f.txt`. */
  path: string;
  body?: string;
  headers?: Record<string, string>;
  /** The status the holder gets. */
  ok: number;
}

const mcp = (method: string, params: unknown = {}) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params });
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };
const rpcBatch = [JSON.stringify(["push", ["pipeline", 0, ["describe"], []]]), JSON.stringify(["pull", 1])].join("\n");
const UPGRADE = { upgrade: "websocket" };

const ROWS: Row[] = [
  { name: "info", method: "GET", path: "", ok: 200 },
  { name: "audit", method: "GET", path: "/audit", ok: 200 },
  { name: "children", method: "GET", path: "/children", ok: 200 },
  { name: "tree", method: "GET", path: "/tree", ok: 200 },
  { name: "folder", method: "PUT", path: "/folder?path=d", ok: 204 },
  { name: "content search", method: "GET", path: "/search?pattern=x", ok: 200 },
  { name: "versions", method: "GET", path: "/versions?path=f.txt", ok: 200 },
  { name: "version bytes", method: "GET", path: "/versions/{v}", ok: 200 },
  { name: "restore", method: "POST", path: "/versions/{v}/restore", ok: 200 },
  { name: "redact", method: "POST", path: "/versions/{v}/redact", ok: 204 },
  { name: "watch SSE", method: "GET", path: "/watch", ok: 200 },
  { name: "watch WebSocket", method: "GET", path: "/watch", headers: UPGRADE, ok: 101 },
  {
    name: "memory",
    method: "POST",
    path: "/memory",
    body: JSON.stringify({ command: "view", path: "/memories" }),
    ok: 200,
  },
  { name: "MCP", method: "POST", path: "/mcp", body: mcp("tools/list"), headers: MCP_HEADERS, ok: 200 },
  { name: "RPC batch", method: "POST", path: "/rpc", body: rpcBatch, ok: 200 },
  { name: "RPC WebSocket", method: "GET", path: "/rpc", headers: UPGRADE, ok: 101 },
  { name: "revoke a child", method: "DELETE", path: "/children/{child}", ok: 204 },
  { name: "line window", method: "GET", path: "/lines?path=f.txt&offset=1&limit=1", ok: 200 },
  // No session named: the holder reaches MCP's GET stream and is told so; anyone else, an unknown cap.
  { name: "MCP GET stream", method: "GET", path: "/mcp", headers: { accept: "text/event-stream" }, ok: 405 },
];

interface Sent {
  /** The path the request goes to (`/object/<token>...` or `/cap...`). */
  url: string;
  token: string;
  row: Row;
  /** The proof's signer, or none. */
  key?: Key;
  /** A proof to send as it is (a replay). */
  proof?: string;
  /** Where the proof goes: the DPoP header (default) or a WebSocket subprotocol entry. */
  via?: "header" | "protocol";
  authorization?: string;
}

async function proofFor(key: Key, method: string, url: string, token: string, body: string | undefined) {
  return signProof(key, { method, url, token, body: body === undefined ? null : enc.encode(body) });
}

type Parts = { header: Record<string, unknown>; claims: Record<string, unknown> };

/**
 * Bad proofs for a row, each signed by the holder's own key unless it cannot
 * be: the first group answers exactly like an unknown token (nothing in them
 * verifies as the cap's key), the second is the holder's own misfire (401).
 */
function badProofs(row: Row): { name: string; answer: "unknown" | 401; edit: (p: Parts) => void; unsigned?: true }[] {
  const now = Math.floor(Date.now() / 1000);
  const cases: { name: string; answer: "unknown" | 401; edit: (p: Parts) => void; unsigned?: true }[] = [
    {
      name: "alg none",
      answer: "unknown",
      unsigned: true,
      edit: (p) => {
        p.header.alg = "none";
      },
    },
    {
      name: "an HMAC alg",
      answer: "unknown",
      edit: (p) => {
        p.header.alg = "HS256";
      },
    },
    {
      name: "private key members",
      answer: "unknown",
      edit: (p) => {
        p.header.jwk = { ...(p.header.jwk as object), d: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A" };
      },
    },
    {
      name: "wrong typ",
      answer: "unknown",
      edit: (p) => {
        p.header.typ = "JWT";
      },
    },
    {
      name: "stale iat",
      answer: 401,
      edit: (p) => {
        p.claims.iat = now - 120;
      },
    },
    {
      name: "future iat",
      answer: 401,
      edit: (p) => {
        p.claims.iat = now + 60;
      },
    },
    {
      name: "missing ath",
      answer: 401,
      edit: (p) => {
        delete p.claims.ath;
      },
    },
    {
      name: "another method",
      answer: 401,
      edit: (p) => {
        p.claims.htm = row.method === "GET" ? "POST" : "GET";
      },
    },
    {
      name: "another URL",
      answer: 401,
      edit: (p) => {
        p.claims.htu = `${p.claims.htu}/elsewhere`;
      },
    },
  ];
  if (row.body !== undefined) {
    cases.push(
      {
        name: "missing content_digest",
        answer: 401,
        edit: (p) => {
          delete p.claims.content_digest;
        },
      },
      {
        name: "another body",
        answer: 401,
        edit: (p) => {
          p.claims.content_digest = "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:";
        },
      },
    );
  }
  return cases;
}

async function badProof(key: Key, row: Row, url: string, token: string, bad: ReturnType<typeof badProofs>[number]) {
  const body = row.body === undefined ? null : enc.encode(row.body);
  const parts = await proofParts(key.jwk, { method: row.method, url, token, body });
  bad.edit(parts);
  if (!bad.unsigned) return signJws(key.privateKey, parts.header, parts.claims);
  const b64 = (v: unknown) => btoa(JSON.stringify(v)).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
  return `${b64(parts.header)}.${b64(parts.claims)}.`;
}

async function send(s: Sent): Promise<{ res: Response; proof: string | null }> {
  const { row } = s;
  const proof = s.proof ?? (s.key ? await proofFor(s.key, row.method, ORIGIN + s.url, s.token, row.body) : null);
  const headers: Record<string, string> = { ...row.headers };
  if (proof !== null && s.via === "protocol") headers["sec-websocket-protocol"] = `capvault.dpop, dpop.${proof}`;
  else if (proof !== null) headers.dpop = proof;
  if (s.authorization) headers.authorization = s.authorization;
  const res = await call(row.method, ORIGIN + s.url, {
    headers,
    ...(row.body !== undefined ? { body: row.body } : {}),
  });
  return { res, proof };
}

/** What a response is, byte for byte: status, every header, the body; a socket is closed unread. */
async function wire(res: Response): Promise<string> {
  res.webSocket?.accept();
  res.webSocket?.close();
  const body = res.status === 101 || res.headers.get("content-type") === "text/event-stream" ? "" : await res.text();
  return JSON.stringify([res.status, [...res.headers].sort(), body]);
}

async function settle(res: Response): Promise<void> {
  if (res.webSocket) {
    res.webSocket.accept();
    res.webSocket.close();
  }
  await res.body?.cancel();
}

describe.each(["r2", "disk"] as const)("holder-bound caps on every surface, %s backend", (backend) => {
  // One bound cap for the whole table, its rows run in order, one test each: a row sends about sixteen
  // requests, the whole table in one test took 24 s of its 30 s beside the rest of `npm test`. The rows
  // share the cap as they did in that one test (restore, then redact of the version left after it; the
  // child revoked by its row), and the file's first request, which loads the worker, is in beforeAll.
  describe("each route family serves its holder, answers a leaked URL like an unknown token, and refuses a replay (401)", () => {
    let key: Key;
    let stranger: Key;
    let t: string;
    let versions: VersionPage["versions"];
    let child: string;
    let unknown: string;

    beforeAll(async () => {
      key = await newKey();
      stranger = await newKey();
      t = (await mintRoot(`holder-surfaces/${crypto.randomUUID()}/`, { backend, holder: key.jwk })).token;
      const put = (body: string) =>
        send({
          url: `/object/${t}/file?path=f.txt`,
          token: t,
          key,
          row: { name: "", method: "PUT", path: "", body, ok: 0 },
        });
      expect((await put("one")).res.status).toBe(201);
      expect((await put("two")).res.status).toBe(200);
      const listed = await send({
        url: `/object/${t}/versions?path=f.txt`,
        token: t,
        key,
        row: ROWS.find((r) => r.name === "versions")!,
      });
      versions = ((await listed.res.json()) as VersionPage).versions;
      const minted = await send({
        url: `/object/${t}/subdir`,
        token: t,
        key,
        row: { name: "", method: "POST", path: "", body: JSON.stringify({ path: "", holder: key.jwk }), ok: 0 },
      });
      child = ((await minted.res.json()) as { id: string }).id;
      unknown = forged();
    });

    for (const row of ROWS)
      it(row.name, async () => {
        // restore takes the older version, redact the newer one left after it.
        const v = row.name === "redact" ? versions[0]!.id : versions[versions.length - 1]!.id;
        const path = row.path.replace("{v}", v).replace("{child}", child);
        const at = (token: string) => `/object/${token}${path}`;
        const expected = await wire((await send({ url: at(unknown), token: unknown, row })).res);
        const noProof = await wire((await send({ url: at(t), token: t, row })).res);
        expect(noProof, `${row.name}: no proof`).toBe(expected);
        const otherKey = await wire((await send({ url: at(t), token: t, row, key: stranger })).res);
        expect(otherKey, `${row.name}: another key`).toBe(expected);

        for (const bad of badProofs(row)) {
          const proof = await badProof(key, row, ORIGIN + at(t), t, bad);
          const res = (await send({ url: at(t), token: t, row, proof })).res;
          if (bad.answer === "unknown") {
            expect(await wire(res), `${row.name}: ${bad.name}`).toBe(expected);
            continue;
          }
          expect(res.status, `${row.name}: ${bad.name}`).toBe(401);
          expect(res.headers.get("www-authenticate"), `${row.name}: ${bad.name}`).toBe(
            'DPoP error="invalid_dpop_proof"',
          );
          await settle(res);
        }

        const served = await send({ url: at(t), token: t, row, key });
        expect(served.res.status, `${row.name}: holder`).toBe(row.ok);
        await settle(served.res);

        const replayed = (await send({ url: at(t), token: t, row, proof: served.proof! })).res;
        expect(replayed.status, `${row.name}: replay`).toBe(401);
        expect(replayed.headers.get("www-authenticate")).toBe('DPoP error="invalid_dpop_proof"');
        await settle(replayed);
      });

    it("revoked by its holder, the cap is gone for the holder too: a fresh proof answers like an unknown token", async () => {
      const info = ROWS[0]!;
      const revoke: Row = { name: "revoke", method: "DELETE", path: "", ok: 204 };
      expect((await send({ url: `/object/${t}`, token: t, row: revoke, key })).res.status).toBe(204);
      const after = await wire((await send({ url: `/object/${t}`, token: t, row: info, key })).res);
      expect(after).toBe(await wire((await send({ url: `/object/${unknown}`, token: unknown, row: info })).res));
    });
  });

  it("WebDAV, which cannot sign, answers a bound cap like an unknown one, even with its holder's proof", async () => {
    const key = await newKey();
    const root = await mintRoot(`holder-surfaces/${crypto.randomUUID()}/`, { backend, holder: key.jwk });
    const row: Row = { name: "dav", method: "GET", path: "/dav/", ok: 0 };
    const unknown = forged();
    const expected = await wire((await send({ url: `/object/${unknown}/dav/`, token: unknown, row })).res);
    const proved = await send({ url: `/object/${root.token}/dav/`, token: root.token, row, key });
    expect(await wire(proved.res)).toBe(expected);
  });

  it("a WebSocket upgrade carries its proof as a subprotocol entry, named back, good for one upgrade", async () => {
    const key = await newKey();
    const root = await mintRoot(`holder-surfaces/${crypto.randomUUID()}/`, { backend, holder: key.jwk });
    const t = root.token;
    for (const row of ROWS.filter((r) => r.headers === UPGRADE)) {
      const url = `/object/${t}${row.path}`;
      const opened = await send({ url, token: t, row, key, via: "protocol" });
      expect(opened.res.status, row.name).toBe(101);
      expect(opened.res.headers.get("sec-websocket-protocol")).toBe("capvault.dpop");
      await settle(opened.res);
      const again = await send({ url, token: t, row, proof: opened.proof!, via: "protocol" });
      expect(again.res.status, `${row.name}: the same proof twice`).toBe(401);
      // A proof for another URL (the RPC socket's, sent to the watch socket) opens nothing either.
      const elsewhere = await proofFor(key, "GET", `${ORIGIN}/object/${t}/elsewhere`, t, undefined);
      const misdirected = await send({ url, token: t, row, proof: elsewhere, via: "protocol" });
      expect(misdirected.res.status).toBe(401);
    }
  });

  it("takes the token in Authorization at /cap/...: DPoP for a bound cap, Bearer for an unbound one, never in a URL", async () => {
    const key = await newKey();
    const bound = await mintRoot(`holder-surfaces/${crypto.randomUUID()}/`, { backend, holder: key.jwk });
    const plain = await mintRoot(`holder-surfaces/${crypto.randomUUID()}/`, { backend });
    const write: Row = { name: "write", method: "PUT", path: "/file?path=a.txt", body: "via header", ok: 201 };
    const read: Row = { name: "read", method: "GET", path: "/file?path=a.txt", ok: 200 };
    const tools: Row = {
      name: "MCP",
      method: "POST",
      path: "/mcp",
      body: mcp("tools/list"),
      headers: MCP_HEADERS,
      ok: 200,
    };

    // Unbound, Bearer: the same routes, no token in the path.
    const b = `Bearer ${plain.token}`;
    expect(
      (await send({ url: "/cap/file?path=a.txt", token: plain.token, row: write, authorization: b })).res.status,
    ).toBe(201);
    const got = (await send({ url: "/cap/file?path=a.txt", token: plain.token, row: read, authorization: b })).res;
    expect(await got.text()).toBe("via header");
    expect((await send({ url: "/cap/mcp", token: plain.token, row: tools, authorization: b })).res.status).toBe(200);

    // Bound, DPoP: the proof's htu is the /cap URL the client used.
    const d = `DPoP ${bound.token}`;
    const asSent = await send({ url: "/cap/file?path=a.txt", token: bound.token, row: write, key, authorization: d });
    expect(asSent.res.status).toBe(201);
    const tools2 = await send({ url: "/cap/mcp", token: bound.token, row: tools, key, authorization: d });
    expect(tools2.res.status).toBe(200);
    await settle(tools2.res);
    const objectHtu = await proofFor(key, "GET", `${ORIGIN}/object/${bound.token}/file`, bound.token, undefined);
    const wrongHtu = await send({
      url: "/cap/file?path=a.txt",
      token: bound.token,
      row: read,
      proof: objectHtu,
      authorization: d,
    });
    expect(wrongHtu.res.status).toBe(401);

    // What an unknown cap gets: a bound cap under Bearer (with a good proof), no header, a forged token.
    const expected = await wire(
      (await send({ url: "/cap/file?path=a.txt", token: "", row: read, authorization: `Bearer ${forged()}` })).res,
    );
    const refused = [
      await send({
        url: "/cap/file?path=a.txt",
        token: bound.token,
        row: read,
        key,
        authorization: `Bearer ${bound.token}`,
      }),
      await send({ url: "/cap/file?path=a.txt", token: bound.token, row: read, key }),
      await send({ url: "/cap/file?path=a.txt", token: bound.token, row: read, authorization: d }),
    ];
    for (const r of refused) expect(await wire(r.res)).toBe(expected);
    expect(expected).not.toContain(bound.token);
  });
  it("the stdio MCP bridge signs each POST with its key file's key; without the key the cap is unknown", async () => {
    const key = await HolderKey.generate();
    const root = await mintRoot(`holder-surfaces/${crypto.randomUUID()}/`, { backend, holder: key.publicJwk });
    const viaWorker = (input: string, init?: RequestInit) => call(init?.method ?? "GET", input, init ?? {});
    const message = { jsonrpc: "2.0", id: 7, method: "tools/list", params: {} };
    const line = JSON.stringify(message);
    const signed = await new CapEndpoint(root.url, viaWorker, key).forward(line, message);
    expect((signed.answer as { result?: { tools?: unknown[] } }).result?.tools?.length).toBeGreaterThan(0);
    const bare = await new CapEndpoint(root.url, viaWorker).forward(line, message);
    expect((bare.answer as { error?: { data?: { code?: string } } }).error?.data?.code).toBe("no_such_cap");
  });
});
