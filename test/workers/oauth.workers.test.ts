/**
 * OAuth 2.1 for remote MCP clients (issue 22), scripted from the spec against
 * the real worker: discovery, registration, consent minting a child cap,
 * the code exchange with PKCE, MCP at the tokenless /mcp, refresh rotation,
 * and the hostile cases (wrong verifier, replayed code, another client or
 * redirect, open redirects, plain PKCE, another resource, refresh reuse,
 * revoked parent).
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import type { CodeRecord, OAuthRegistry } from "../../durable-objects/oauth-registry.ts";
import { call, cap, mintRoot, ORIGIN } from "./vault.ts";

const REDIRECT = "https://client.example/callback";
const RESOURCE = `${ORIGIN}/mcp`;

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

async function pkce() {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = b64url(new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))));
  return { verifier, challenge };
}

async function register(redirectUris: string[] = [REDIRECT], name = "Test Client") {
  const res = await call("POST", "/oauth/register", { json: { redirect_uris: redirectUris, client_name: name } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}

const form = (fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return { headers: { "content-type": "application/x-www-form-urlencoded" }, body: body.toString() };
};

interface Flow {
  clientId: string;
  verifier: string;
  challenge: string;
}

/** Approves in the consent form with `capToken`; answers the raw response. */
async function approve(flow: Flow, capToken: string, extra: Record<string, string | string[]> = {}) {
  return call("POST", "/oauth/authorize", {
    ...form({
      client_id: flow.clientId,
      redirect_uri: REDIRECT,
      response_type: "code",
      code_challenge: flow.challenge,
      code_challenge_method: "S256",
      state: "st-1",
      resource: RESOURCE,
      cap: capToken,
      path: "docs",
      rights: ["read", "list"],
      ttl: "86400",
      decision: "approve",
      ...extra,
    }),
    redirect: "manual",
  });
}

async function codeFor(flow: Flow, capToken: string): Promise<string> {
  const res = await approve(flow, capToken);
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get("location")!);
  expect(location.origin + location.pathname).toBe(REDIRECT);
  expect(location.searchParams.get("state")).toBe("st-1");
  expect(location.searchParams.get("iss")).toBe(ORIGIN);
  return location.searchParams.get("code")!;
}

function exchange(flow: Flow, code: string, extra: Record<string, string> = {}) {
  return call(
    "POST",
    "/oauth/token",
    form({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT,
      client_id: flow.clientId,
      code_verifier: flow.verifier,
      resource: RESOURCE,
      ...extra,
    }),
  );
}

function refresh(flow: Flow, refreshToken: string) {
  return call(
    "POST",
    "/oauth/token",
    form({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: flow.clientId }),
  );
}

interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
}

function mcp(accessToken: string | null, body: unknown) {
  const headers: Record<string, string> = { accept: "application/json, text/event-stream" };
  if (accessToken) headers.authorization = `Bearer ${accessToken}`;
  return call("POST", "/mcp", { headers, json: body });
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};
const callTool = (name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id: 2,
  method: "tools/call",
  params: { name, arguments: args },
});

async function toolText(res: Response): Promise<{ text: string; isError: boolean }> {
  expect(res.status).toBe(200);
  const body = (await res.json()) as { result: { content: { text: string }[]; isError?: boolean } };
  return { text: body.result.content[0]!.text, isError: body.result.isError === true };
}

let counter = 0;
async function setup() {
  const root = cap((await mintRoot(`oauth-${Date.now()}-${++counter}/`)).token);
  expect((await root.write("docs/a.txt", "hello from docs")).status).toBe(201);
  expect((await root.write("secret.txt", "not granted")).status).toBe(201);
  const clientId = await register();
  return { root, flow: { clientId, ...(await pkce()) } };
}

describe("discovery", () => {
  it("an unauthenticated /mcp names its resource metadata, which names this server", async () => {
    const res = await mcp(null, initialize);
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`,
    );
    const prm = (await (await call("GET", "/.well-known/oauth-protected-resource/mcp")).json()) as Record<
      string,
      unknown
    >;
    expect(prm.resource).toBe(RESOURCE);
    expect(prm.authorization_servers).toEqual([ORIGIN]);
    const as = (await (await call("GET", "/.well-known/oauth-authorization-server")).json()) as Record<string, unknown>;
    // RFC 8414 §2 required fields, and what OAuth 2.1 and RFC 9207 add.
    expect(as.issuer).toBe(ORIGIN);
    expect(as.authorization_endpoint).toBe(`${ORIGIN}/oauth/authorize`);
    expect(as.token_endpoint).toBe(`${ORIGIN}/oauth/token`);
    expect(as.response_types_supported).toEqual(["code"]);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
  });

  it("registration accepts only https or loopback http redirect URIs", async () => {
    for (const bad of [
      "http://client.example/cb",
      "javascript:alert(1)",
      "https://client.example/cb#frag",
      "custom-scheme:/cb",
      "https://user:pw@client.example/cb",
    ]) {
      const res = await call("POST", "/oauth/register", { json: { redirect_uris: [bad] } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe("invalid_redirect_uri");
    }
    const ok = await call("POST", "/oauth/register", { json: { redirect_uris: ["http://127.0.0.1:3333/cb"] } });
    expect(ok.status).toBe(201);
    const big = await call("POST", "/oauth/register", {
      json: { redirect_uris: [REDIRECT], client_name: "x".repeat(20_000) },
    });
    expect(big.status).toBe(413);
  });
});

describe("the flow", () => {
  it("consent mints a read-only child of the chosen folder; the token reads there over MCP and nothing else", async () => {
    const { root, flow } = await setup();
    const page = await call(
      "GET",
      `/oauth/authorize?${new URLSearchParams({
        client_id: flow.clientId,
        redirect_uri: REDIRECT,
        response_type: "code",
        code_challenge: flow.challenge,
        code_challenge_method: "S256",
        state: "st-1",
        resource: RESOURCE,
      })}`,
    );
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Test Client");
    expect(html).toContain("unverified");
    expect(page.headers.get("content-security-policy")).toContain("form-action 'self' https://client.example");

    const code = await codeFor(flow, root.token);
    const children = (await (await root.children()).json()) as {
      children: { label: string | null; rights: string[] }[];
    };
    expect(children.children.map((ch) => [ch.label, ch.rights])).toEqual([
      ["OAuth: Test Client (unverified client)", ["read", "list"]],
    ]);

    const res = await exchange(flow, code);
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Tokens;
    expect(tokens.token_type).toBe("Bearer");
    expect(tokens.expires_in).toBeLessThanOrEqual(3600);
    // The token opens nothing outside /mcp: not as a cap in a path, not in the header form.
    expect((await call("GET", `/object/${tokens.access_token}`)).status).toBe(404);
    expect(
      (await call("GET", "/cap/stat?path=", { headers: { authorization: `Bearer ${tokens.access_token}` } })).status,
    ).toBe(404);

    expect((await mcp(tokens.access_token, initialize)).status).toBe(200);
    expect(await toolText(await mcp(tokens.access_token, callTool("read_file", { path: "a.txt" })))).toEqual({
      text: "hello from docs",
      isError: false,
    });
    const outside = await toolText(await mcp(tokens.access_token, callTool("read_file", { path: "../secret.txt" })));
    expect(outside.isError).toBe(true);
    const write = await toolText(
      await mcp(tokens.access_token, callTool("write_file", { path: "b.txt", content: "x" })),
    );
    expect(write.isError).toBe(true);
    expect((await root.stat("docs/b.txt")).status).toBe(404);
  });

  it("refresh rotates; the old refresh token coming back ends the grant and its cap", async () => {
    const { root, flow } = await setup();
    const first = (await (await exchange(flow, await codeFor(flow, root.token))).json()) as Tokens;
    const second = await refresh(flow, first.refresh_token);
    expect(second.status).toBe(200);
    const rotated = (await second.json()) as Tokens;
    expect(rotated.refresh_token).not.toBe(first.refresh_token);
    expect((await mcp(first.access_token, initialize)).status).toBe(401);
    expect((await mcp(rotated.access_token, initialize)).status).toBe(200);

    const replay = await refresh(flow, first.refresh_token);
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await mcp(rotated.access_token, initialize)).status).toBe(401);
    expect((await refresh(flow, rotated.refresh_token)).status).toBe(400);
    const children = (await (await root.children()).json()) as { children: unknown[] };
    expect(children.children).toEqual([]);
  });

  it("revoking the parent cap kills the access token and the refresh", async () => {
    const { root, flow } = await setup();
    const tokens = (await (await exchange(flow, await codeFor(flow, root.token))).json()) as Tokens;
    expect((await mcp(tokens.access_token, initialize)).status).toBe(200);
    expect((await root.revoke()).status).toBeLessThan(300);
    const dead = await mcp(tokens.access_token, callTool("read_file", { path: "a.txt" }));
    expect(dead.status).toBe(401);
    expect(dead.headers.get("www-authenticate")).toContain('error="invalid_token"');
    const res = await refresh(flow, tokens.refresh_token);
    expect(res.status).toBe(400);
  });

  it("revoking the grant's child in the delegation tree kills it", async () => {
    const { root, flow } = await setup();
    const tokens = (await (await exchange(flow, await codeFor(flow, root.token))).json()) as Tokens;
    const children = (await (await root.children()).json()) as { children: { id: string }[] };
    expect((await root.revokeChild(children.children[0]!.id)).status).toBeLessThan(300);
    expect((await mcp(tokens.access_token, initialize)).status).toBe(401);
    expect((await refresh(flow, tokens.refresh_token)).status).toBe(400);
  });
});

describe("hostile codes", () => {
  it("a wrong verifier burns the code and revokes the cap consent minted", async () => {
    const { root, flow } = await setup();
    const code = await codeFor(flow, root.token);
    const wrong = await exchange(flow, code, { code_verifier: (await pkce()).verifier });
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: string }).error).toBe("invalid_grant");
    expect((await exchange(flow, code)).status).toBe(400);
    expect(((await (await root.children()).json()) as { children: unknown[] }).children).toEqual([]);
  });

  it("a replayed code fails and ends the grant the first exchange started", async () => {
    const { root, flow } = await setup();
    const code = await codeFor(flow, root.token);
    const tokens = (await (await exchange(flow, code)).json()) as Tokens;
    expect((await exchange(flow, code)).status).toBe(400);
    expect((await mcp(tokens.access_token, initialize)).status).toBe(401);
    expect((await refresh(flow, tokens.refresh_token)).status).toBe(400);
  });

  it("a code for another client or another redirect URI is refused", async () => {
    const { root, flow } = await setup();
    const other = await register();
    expect((await exchange({ ...flow, clientId: other }, await codeFor(flow, root.token))).status).toBe(400);
    const res = await exchange(flow, await codeFor(flow, root.token), { redirect_uri: "https://client.example/other" });
    expect(res.status).toBe(400);
    // A token for another resource (RFC 8707) is not issued.
    const target = await exchange(flow, await codeFor(flow, root.token), { resource: "https://elsewhere.example/mcp" });
    expect(((await target.json()) as { error: string }).error).toBe("invalid_target");
  });

  it("no redirect to an unregistered URI, plain PKCE refused, a dead cap mints nothing", async () => {
    const { root, flow } = await setup();
    const base = {
      client_id: flow.clientId,
      response_type: "code",
      code_challenge: flow.challenge,
      code_challenge_method: "S256",
    };
    for (const redirect of ["https://evil.example/cb", `${REDIRECT}/x`, `${REDIRECT}?a=1`]) {
      const res = await call("GET", `/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: redirect })}`, {
        redirect: "manual",
      });
      expect(res.status).toBe(400);
      expect(res.headers.get("location")).toBeNull();
    }
    const plain = await call(
      "GET",
      `/oauth/authorize?${new URLSearchParams({ ...base, redirect_uri: REDIRECT, code_challenge_method: "plain" })}`,
      { redirect: "manual" },
    );
    expect(plain.status).toBe(302);
    expect(new URL(plain.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    const none = await approve(flow, root.token, { code_challenge_method: "" });
    expect(none.status).toBe(302);
    expect(new URL(none.headers.get("location")!).searchParams.get("code")).toBeNull();

    const dead = cap((await mintRoot(`oauth-dead-${Date.now()}/`)).token);
    await dead.revoke();
    const refused = await approve(flow, dead.token);
    expect(refused.status).toBe(404);
    expect(await refused.text()).toContain("no such capability");
    // A cap URL from before signed tokens is told how it is re-issued, as on every route.
    const legacy = await approve(flow, `https://vault.test/object/${"a".repeat(32)}`);
    expect(legacy.status).toBe(410);
    expect(await legacy.text()).toContain("capvault reissue-legacy");
    const denied = await approve(flow, root.token, { decision: "deny" });
    expect(new URL(denied.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
    expect(((await (await root.children()).json()) as { children: unknown[] }).children).toEqual([]);
  });
});

describe("time and secrecy", () => {
  it("an expired code is refused, and revokes the cap consent minted", async () => {
    const { root, flow } = await setup();
    const code = await codeFor(flow, root.token);
    // The code's clock, moved rather than waited for: its record says it expired a second ago.
    const ns = (env as unknown as { OAUTH: DurableObjectNamespace<OAuthRegistry> }).OAUTH;
    await runInDurableObject(ns.get(ns.idFromName("oauth")), (_instance, state) => {
      for (const [key, value] of state.storage.kv.list<CodeRecord>({ prefix: "code:" })) {
        if (value.clientId === flow.clientId) state.storage.kv.put(key, { ...value, expiresAt: Date.now() - 1000 });
      }
    });
    const res = await exchange(flow, code);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toBe("invalid_grant");
    expect(((await (await root.children()).json()) as { children: unknown[] }).children).toEqual([]);
  });

  it("no code, token, verifier or cap is logged, and the registry stores none of them", async () => {
    const lines: string[] = [];
    const spies = (["log", "info", "warn", "error"] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" "))),
    );
    const secrets: string[] = [];
    try {
      const { root, flow } = await setup();
      const code = await codeFor(flow, root.token);
      const tokens = (await (await exchange(flow, code)).json()) as Tokens;
      await mcp(tokens.access_token, callTool("read_file", { path: "a.txt" }));
      const rotated = (await (await refresh(flow, tokens.refresh_token)).json()) as Tokens;
      await refresh(flow, tokens.refresh_token);
      await mcp(rotated.access_token, initialize);
      secrets.push(root.token, code, flow.verifier, tokens.access_token, tokens.refresh_token, rotated.access_token);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(lines.length).toBeGreaterThan(0);
    const logged = lines.join("\n");
    for (const secret of secrets) expect(logged).not.toContain(secret);
    const ns = (env as unknown as { OAUTH: DurableObjectNamespace<OAuthRegistry> }).OAUTH;
    const stored = await runInDurableObject(ns.get(ns.idFromName("oauth")), (_instance, state) =>
      JSON.stringify([...state.storage.kv.list()]),
    );
    for (const secret of secrets) expect(stored).not.toContain(secret);
  });
});
