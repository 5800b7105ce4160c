/**
 * Holder-bound caps (issue 20) over the HTTP file routes, in real workerd on
 * both backends: what a leaked URL gets (byte for byte an unknown token),
 * what the holder's own bad proofs get (401 invalid_dpop_proof), and binding
 * down the tree.
 */
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AdminClient, FsCap, HolderKey } from "../../clients/typescript/index.ts";
import { type HolderJwk, jwkThumbprint, parseHolderJwk } from "../../shared/holder-key.ts";
import { proofParts, signJws, signProof } from "../../shared/holder-proof-sign.ts";
import { base32 } from "../../shared/token.ts";
import { ADMIN, call, cap, type Minted, mintRoot, ORIGIN } from "./vault.ts";

interface Key {
  privateKey: CryptoKey;
  jwk: HolderJwk;
  jkt: string;
}

async function newKey(kind: "Ed25519" | "P-256" = "Ed25519"): Promise<Key> {
  const algorithm = kind === "Ed25519" ? { name: "Ed25519" } : { name: "ECDSA", namedCurve: "P-256" };
  const pair = (await crypto.subtle.generateKey(algorithm, false, ["sign", "verify"])) as CryptoKeyPair;
  const parsed = parseHolderJwk(await crypto.subtle.exportKey("jwk", pair.publicKey));
  if (!parsed.ok) throw new Error(parsed.reason);
  return { privateKey: pair.privateKey, jwk: parsed.jwk, jkt: await jwkThumbprint(parsed.jwk) };
}

const enc = new TextEncoder();
type Edit = (header: Record<string, unknown>, claims: Record<string, unknown>) => void;

interface Req {
  method: "GET" | "PUT" | "POST" | "DELETE";
  /** After `/object/<token>`, query included. */
  path: string;
  body?: string;
}

/** Sends `req` through `token` with a proof by `key` (edited first), or `proof` as given. */
async function send(
  token: string,
  req: Req,
  opts: { key?: Key; edit?: Edit; proof?: string | null; signFor?: Partial<Req> } = {},
): Promise<Response> {
  const url = `${ORIGIN}/object/${token}${req.path}`;
  let proof = opts.proof ?? null;
  if (opts.key && opts.proof === undefined) {
    const target = { ...req, ...opts.signFor };
    const body = target.method === "GET" || target.method === "DELETE" ? null : enc.encode(target.body ?? "");
    const { header, claims } = await proofParts(opts.key.jwk, {
      method: target.method,
      url: `${ORIGIN}/object/${token}${target.path}`,
      token,
      body,
    });
    opts.edit?.(header, claims);
    proof = await signJws(opts.key.privateKey, header, claims);
  }
  const headers: Record<string, string> = {};
  if (proof !== null) headers.dpop = proof;
  if (req.body !== undefined) headers["content-type"] = "application/json";
  return call(req.method, url, { headers, ...(req.body !== undefined ? { body: req.body } : {}) });
}

/** What a response is, byte for byte: status, every header, the body. */
async function wire(res: Response): Promise<string> {
  return JSON.stringify([res.status, [...res.headers].sort(), await res.text()]);
}

function forgedToken(): string {
  return base32(crypto.getRandomValues(new Uint8Array(30)));
}

let counter = 0;
/** RFC 8037's public key: a holder to share children to. */
const SHARED_TO = { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" };

describe.each(["r2", "disk"] as const)("holder-bound caps, %s backend", (backend) => {
  async function boundRoot(key: Key): Promise<Minted> {
    return mintRoot(`holder/${backend}/${++counter}/`, { backend, holder: key.jwk });
  }

  /** Each route of the matrix, on a root that holds `f.txt`. */
  const ROUTES: Req[] = [
    { method: "GET", path: "" },
    { method: "GET", path: "/file?path=f.txt" },
    { method: "PUT", path: "/file?path=g.txt", body: "new bytes" },
    { method: "GET", path: "/list?path=" },
    { method: "GET", path: "/stat?path=f.txt" },
    { method: "DELETE", path: "/file?path=f.txt" },
    { method: "POST", path: "/subdir", body: JSON.stringify({ path: "", rights: ["read"], holder: SHARED_TO }) },
  ];

  it("mints bound, shows the thumbprint in info, and serves the holder on every file route", async () => {
    const key = await newKey();
    const root = await boundRoot(key);
    expect(root.token).toMatch(/^[q-z2-7]/);
    expect((await send(root.token, { method: "PUT", path: "/file?path=f.txt", body: "hello" }, { key })).status).toBe(
      201,
    );
    const info = await send(root.token, { method: "GET", path: "" }, { key });
    expect(info.status).toBe(200);
    const body = (await info.json()) as { holder: unknown };
    expect(body.holder).toEqual({ jkt: key.jkt });
    expect(JSON.stringify(body)).not.toContain(key.jwk.x);
    for (const req of ROUTES) {
      const res = await send(root.token, req, { key });
      expect([200, 201, 204], `${req.method} ${req.path}`).toContain(res.status);
      await res.body?.cancel();
    }
    // A P-256 holder works too.
    const p256 = await newKey("P-256");
    const other = await boundRoot(p256);
    expect((await send(other.token, { method: "GET", path: "/list?path=" }, { key: p256 })).status).toBe(200);
  });

  it("answers a leaked URL exactly like an unknown token: no proof, another key, a bad signature, alg none, HS256, a private jwk, a wrong typ", async () => {
    const key = await newKey();
    const stranger = await newKey();
    const root = await boundRoot(key);
    await send(root.token, { method: "PUT", path: "/file?path=f.txt", body: "hello" }, { key });
    const unknown = forgedToken();
    for (const req of ROUTES) {
      const expected = await wire(await send(unknown, req));
      const sig = (await proofParts(key.jwk, { method: req.method, url: `${ORIGIN}/x`, token: root.token, body: null }))
        .header;
      const noneProof = `${btoa(JSON.stringify({ ...sig, alg: "none" })).replace(/=+$/, "")}.e30.`;
      const attempts: [string, Parameters<typeof send>[2]][] = [
        ["no proof", {}],
        ["another key", { key: stranger }],
        [
          "another key, stale",
          {
            key: stranger,
            edit: (_, c) => {
              c.iat = 1;
            },
          },
        ],
        [
          "bad signature",
          {
            proof: await (async () => {
              const p = await signProof(key, {
                method: req.method,
                url: `${ORIGIN}/object/${root.token}`,
                token: root.token,
                body: null,
              });
              return `${p.slice(0, -4)}${p.endsWith("AAAA") ? "BBBB" : "AAAA"}`;
            })(),
          },
        ],
        ["alg none", { proof: noneProof }],
        [
          "HS256",
          {
            key,
            edit: (h) => {
              h.alg = "HS256";
            },
          },
        ],
        [
          "private jwk",
          {
            key,
            edit: (h) => {
              h.jwk = { ...key.jwk, d: "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A" };
            },
          },
        ],
        [
          "wrong typ",
          {
            key,
            edit: (h) => {
              h.typ = "JWT";
            },
          },
        ],
      ];
      for (const [what, opts] of attempts) {
        expect(await wire(await send(root.token, req, opts)), `${what}: ${req.method} ${req.path}`).toBe(expected);
      }
    }
    // Nothing the finder sent changed anything: the file is still there.
    const stat = await send(root.token, { method: "GET", path: "/stat?path=f.txt" }, { key });
    expect(stat.status).toBe(200);
    // The holder's audit shows its URL being tried, and names no key or token.
    const audit = await send(root.token, { method: "GET", path: "/audit" }, { key });
    const text = await audit.text();
    const entries = (JSON.parse(text) as { entries: { op: string; outcome: string; count: number }[] }).entries;
    const tried = entries.find((e) => e.op === "holder_proof" && e.outcome === "no_such_cap");
    expect(tried?.count).toBeGreaterThanOrEqual(ROUTES.length);
    for (const secret of [root.token, key.jwk.x, stranger.jwk.x]) expect(text).not.toContain(secret);
  });

  it("tells the holder its own stale, future, replayed or misdirected proof is invalid (401 DPoP), and changes nothing", async () => {
    const key = await newKey();
    const root = await boundRoot(key);
    const now = Math.floor(Date.now() / 1000);
    const put: Req = { method: "PUT", path: "/file?path=g.txt", body: "new bytes" };
    const cases: [string, Req, Parameters<typeof send>[2]][] = [];
    for (const req of ROUTES) {
      cases.push(
        [
          "stale",
          req,
          {
            key,
            edit: (_, c) => {
              c.iat = now - 120;
            },
          },
        ],
        [
          "future",
          req,
          {
            key,
            edit: (_, c) => {
              c.iat = now + 60;
            },
          },
        ],
        ["another method", req, { key, signFor: { method: req.method === "GET" ? "DELETE" : "GET" } }],
        ["another URL", req, { key, signFor: { path: "/tree" } }],
        [
          "missing ath",
          req,
          {
            key,
            edit: (_, c) => {
              delete c.ath;
            },
          },
        ],
      );
    }
    cases.push(
      ["another body", put, { key, signFor: { body: "other bytes" } }],
      [
        "missing content_digest",
        put,
        {
          key,
          edit: (_, c) => {
            delete c.content_digest;
          },
        },
      ],
    );
    for (const [what, req, opts] of cases) {
      const res = await send(root.token, req, opts);
      expect(res.status, `${what}: ${req.method} ${req.path}`).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('DPoP error="invalid_dpop_proof"');
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    }
    // A streamed upload past the whole-body size, one byte unlike what was signed: nothing is stored.
    const big = "x".repeat(300 * 1024);
    const tampered = await send(
      root.token,
      { method: "PUT", path: "/file?path=big.bin", body: `${big}y` },
      { key, signFor: { body: `${big}z` } },
    );
    expect(tampered.status).toBe(401);
    await tampered.body?.cancel();
    const over = await send(root.token, { method: "PUT", path: "/file?path=g.txt", body: big }, { key });
    expect(over.status).toBe(201);
    const overwrite = await send(
      root.token,
      { method: "PUT", path: "/file?path=g.txt", body: `${big}y` },
      { key, signFor: { body: `${big}z` } },
    );
    expect(overwrite.status).toBe(401);
    await overwrite.body?.cancel();
    const kept = await send(root.token, { method: "GET", path: "/stat?path=g.txt" }, { key });
    expect(((await kept.json()) as { size: number }).size).toBe(big.length);
    expect((await send(root.token, { method: "GET", path: "/stat?path=big.bin" }, { key })).status).toBe(404);
    await send(root.token, { method: "DELETE", path: "/file?path=g.txt" }, { key });
    // A proof used once is refused the second time.
    const proof = await signProof(key, {
      method: "PUT",
      url: `${ORIGIN}/object/${root.token}/file`,
      token: root.token,
      body: enc.encode("once"),
    });
    expect(
      (await send(root.token, { method: "PUT", path: "/file?path=once.txt", body: "once" }, { proof })).status,
    ).toBe(201);
    const replay = await send(root.token, { method: "PUT", path: "/file?path=once.txt", body: "once" }, { proof });
    expect(replay.status).toBe(401);
    await replay.body?.cancel();
    // Nothing refused was stored, deleted or minted.
    expect((await send(root.token, { method: "GET", path: "/stat?path=g.txt" }, { key })).status).toBe(404);
    const children = await send(root.token, { method: "GET", path: "/children" }, { key });
    expect(((await children.json()) as { children: unknown[] }).children).toEqual([]);
  });

  it("never loosens down the tree; a child bound to another key opens for that key only; revoking the parent kills it", async () => {
    const parentKey = await newKey();
    const childKey = await newKey("P-256");
    const root = await boundRoot(parentKey);
    const subdir = (body: unknown, key = parentKey) =>
      send(root.token, { method: "POST", path: "/subdir", body: JSON.stringify(body) }, { key });
    const unbound = await subdir({ path: "" });
    expect(unbound.status).toBe(403);
    expect(((await unbound.json()) as { error: { code: string } }).error.code).toBe("forbidden");
    const badKey = await subdir({ path: "", holder: { ...childKey.jwk, d: "x" } });
    expect(badKey.status).toBe(400);
    await badKey.body?.cancel();
    const made = await subdir({ path: "", holder: childKey.jwk });
    expect(made.status).toBe(201);
    const child = (await made.json()) as Minted;
    const list: Req = { method: "GET", path: "/list?path=" };
    expect((await send(child.token, list, { key: childKey })).status).toBe(200);
    const unknown = await wire(await send(forgedToken(), list));
    expect(await wire(await send(child.token, list, { key: parentKey }))).toBe(unknown);
    expect(await wire(await send(root.token, list, { key: childKey }))).toBe(unknown);
    // A bound cap is fail-closed where no proof is taken (WebDAV cannot carry one).
    expect(await wire(await send(child.token, { method: "GET", path: "/dav/" }, { key: childKey }))).toBe(
      await wire(await send(forgedToken(), { method: "GET", path: "/dav/" })),
    );

    expect((await send(root.token, { method: "DELETE", path: "" }, { key: parentKey })).status).toBe(204);
    expect(await wire(await send(child.token, list, { key: childKey }))).toBe(unknown);
    expect(await wire(await send(root.token, list, { key: parentKey }))).toBe(unknown);
  });

  it("the SDK's HolderKey signs every call: a share to another key works for that key's FsCap only", async () => {
    const fetch = (input: string, init?: RequestInit) => SELF.fetch(input, init);
    const admin = new AdminClient(ORIGIN, ADMIN, { fetch });
    const mine = await HolderKey.generate();
    const root = await admin.mintRoot({ backend, prefix: `holder/${backend}/${++counter}/`, holder: mine });
    await root.write("notes/a.md", "# a\n");
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(enc.encode("streamed"));
        c.close();
      },
    });
    await root.write("notes/b.bin", stream, { length: 8 });
    expect(await root.readText("notes/b.bin")).toBe("streamed");
    expect((await root.info()).holder).toEqual({ jkt: mine.jkt });
    const theirs = await HolderKey.generate({ algorithm: "P-256" });
    const shared = await root.subdir({ path: "notes", rights: ["read", "list"], holder: theirs.publicJwk });
    const received = new FsCap(shared.url, { fetch, holder: theirs });
    expect(await received.readText("a.md")).toBe("# a\n");
    // The same URL copied out of a log, without the key: an unknown cap.
    const leaked = new FsCap(shared.url, { fetch });
    await expect(leaked.readText("a.md")).rejects.toMatchObject({ code: "no_such_cap" });
    await expect(new FsCap(shared.url, { fetch, holder: mine }).readText("a.md")).rejects.toMatchObject({
      code: "no_such_cap",
    });
    expect(await received.readText("a.md")).toBe("# a\n");
  });

  it("an unbound cap may mint a bound child, and still needs no proof itself", async () => {
    const key = await newKey();
    const root = cap((await mintRoot(`holder/${backend}/${++counter}/`, { backend })).token);
    expect(root.token).toMatch(/^[a-p]/);
    expect((await root.list()).status).toBe(200);
    const made = await root.subdir({ path: "", holder: key.jwk });
    expect(made.status).toBe(201);
    const child = (await made.json()) as Minted;
    expect((await call("GET", `/object/${child.token}/list?path=`)).status).toBe(404);
    expect((await send(child.token, { method: "GET", path: "/list?path=" }, { key })).status).toBe(200);
  });
});
