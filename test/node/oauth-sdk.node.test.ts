/**
 * The official MCP SDK client's OAuth support against the real launcher
 * (issue 22): given only `<vault>/mcp`, it discovers, registers and sends the
 * person to the consent page; the person approves a read + list child of one
 * folder with their cap; the client finishes with the code, lists and reads
 * over MCP, a write is refused, and revoking the grant in the delegation
 * tree ends its access and its refresh.
 */

import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;
let rootToken: string;

beforeAll(async () => {
  vault = await startTestVault();
  rootToken = new URL(vault.rootCapUrl).pathname.split("/")[2]!;
  const put = await fetch(`${vault.url}/object/${rootToken}/file?path=docs/a.txt`, { method: "PUT", body: "hi there" });
  expect(put.status).toBe(201);
});

afterAll(async () => {
  await vault?.stop();
});

/** An in-memory client: what a hosted connector keeps, and where it would open a browser. */
class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = "";
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return "http://127.0.0.1:9/callback";
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "SDK test client",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** The person's part: the consent page, approved with their cap for `docs`, read + list, a day. */
async function consent(authorizationUrl: URL): Promise<string> {
  const page = await fetch(authorizationUrl);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain("SDK test client");
  const fields = new URLSearchParams();
  for (const [, name, value] of html.matchAll(/<input type="hidden" name="([a-z_]+)" value="([^"]*)">/g)) {
    fields.append(name!, value!.replace(/&amp;/g, "&").replace(/&quot;/g, '"'));
  }
  for (const [k, v] of [
    ["cap", `${vault.url}/ui#${rootToken}`],
    ["path", "docs"],
    ["rights", "read"],
    ["rights", "list"],
    ["ttl", "86400"],
    ["decision", "approve"],
  ]) {
    fields.append(k!, v!);
  }
  const approved = await fetch(`${vault.url}/oauth/authorize`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: fields,
    redirect: "manual",
  });
  expect(approved.status).toBe(302);
  const back = new URL(approved.headers.get("location")!);
  expect(back.searchParams.get("iss")).toBe(vault.url);
  return back.searchParams.get("code")!;
}

it("the SDK client connects with only the URL, the person's consent, and loses access on revocation", async () => {
  const provider = new MemoryProvider();
  const endpoint = new URL(`${vault.url}/mcp`);
  const first = new Client({ name: "oauth-test", version: "1.0.0" });
  const firstTransport = new StreamableHTTPClientTransport(endpoint, { authProvider: provider });
  await expect(first.connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.info?.client_id).toBeTruthy();
  const url = provider.authorizationUrl!;
  expect(url.searchParams.get("code_challenge_method")).toBe("S256");
  expect(url.searchParams.get("resource")).toBe(`${vault.url}/mcp`);

  await firstTransport.finishAuth(await consent(url));
  expect(provider.saved?.refresh_token).toBeTruthy();

  const client = new Client({ name: "oauth-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(endpoint, { authProvider: provider }));
  const names = (await client.listTools()).tools.map((t) => t.name);
  expect(names).toContain("read_file");
  expect(names).not.toContain("write_file");
  const read = (await client.callTool({ name: "read_file", arguments: { path: "a.txt" } })) as {
    content: { text: string }[];
  };
  expect(read.content[0]!.text).toBe("hi there");

  // The grant is a child of the person's cap, labelled with the client; revoking it there ends it.
  const children = (await (await fetch(`${vault.url}/object/${rootToken}/children`)).json()) as {
    children: { id: string; label: string }[];
  };
  const grant = children.children.find((ch) => ch.label === "OAuth: SDK test client (unverified client)")!;
  expect((await fetch(`${vault.url}/object/${rootToken}/children/${grant.id}`, { method: "DELETE" })).ok).toBe(true);
  await expect(client.callTool({ name: "read_file", arguments: { path: "a.txt" } })).rejects.toThrow();
  const refreshed = await fetch(`${vault.url}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: provider.saved!.refresh_token!,
      client_id: provider.info!.client_id,
    }),
  });
  expect(refreshed.status).toBe(400);
  await client.close();
  // Nothing the launcher printed names a token the flow handed out.
  expect(vault.output()).not.toContain(provider.saved!.access_token);
  expect(vault.output()).not.toContain(provider.saved!.refresh_token!);
});
