/**
 * OAuth for remote MCP clients end to end in Debian's real Chromium (issue
 * 22), against the real launcher: the person's side (the consent page, the
 * console's delegation tree) is clicked in the browser; the client's side is
 * a plain OAuth client over fetch with the official MCP SDK at `/mcp`, and
 * then the real `mcp-remote` over stdio. Screenshots in tmp/oauth-e2e/.
 */
import { createHash, randomBytes } from "node:crypto";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { launchChromium } from "./console-browser.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

const SHOTS = path.join(PROJECT_ROOT, "tmp/oauth-e2e");
const MCP_REMOTE = path.join(PROJECT_ROOT, "node_modules/mcp-remote/dist/proxy.js");

let vault: TestVault;
let context: BrowserContext;
let profile: string;
let rootToken: string;
/** The test client's redirect target: a real loopback server that only says the code arrived. */
let callback: Server;
let callbackUrl: string;

const b64url = (bytes: Buffer) => bytes.toString("base64url");
const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields),
});

beforeAll(async () => {
  await mkdir(SHOTS, { recursive: true });
  vault = await startTestVault();
  rootToken = new URL(vault.rootCapUrl).pathname.split("/")[2]!;
  for (const [file, text] of [
    ["docs/a.txt", "hi there"],
    ["docs/b.txt", "second"],
    ["private/secret.txt", "not granted"],
  ]) {
    const put = await fetch(`${vault.url}/object/${rootToken}/file?path=${file}`, { method: "PUT", body: text });
    expect(put.status).toBe(201);
  }
  callback = createServer((_req, res) => res.end("code received"));
  await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve));
  const address = callback.address() as { port: number };
  callbackUrl = `http://127.0.0.1:${address.port}/callback`;
  ({ context, profile } = await launchChromium({ width: 1000, height: 800 }));
}, 120_000);

afterAll(async () => {
  await context?.close();
  await new Promise((resolve) => callback?.close(resolve));
  await vault?.stop();
  if (profile) await rm(profile, { recursive: true, force: true });
});

async function children(): Promise<{ id: string; label: string }[]> {
  const res = await fetch(`${vault.url}/object/${rootToken}/children`);
  return ((await res.json()) as { children: { id: string; label: string }[] }).children;
}

/** The person, in the consent page: their cap, a folder, read + list only, one day; then Approve. */
async function approveInBrowser(page: Page, authorizationUrl: string, cap: string, shotName: string): Promise<void> {
  await page.goto(authorizationUrl);
  await page.locator("h1", { hasText: "Grant a folder to an MCP client" }).waitFor();
  await page.fill("#cap", cap);
  await page.fill("input[name=path]", "docs");
  for (const right of ["read", "write", "delete", "list", "subdir"]) {
    await page.setChecked(`input[name=rights][value=${right}]`, right === "read" || right === "list");
  }
  await page.selectOption("select[name=ttl]", "86400");
  await shot(page, shotName);
  await page.click("button[value=approve]");
}

/** The person revokes the grant in the console's delegation tree (after its confirmation). */
async function revokeInConsole(page: Page, label: string): Promise<void> {
  page.once("dialog", (d) => void d.accept());
  await page.goto(`${vault.url}/ui#${rootToken}`);
  await page.locator("#cap-header .facts").waitFor();
  await page.click("#tab-delegation");
  const node = page.locator(".node", { hasText: label });
  await node.waitFor();
  await shot(page, "03-delegation");
  await node.locator("text=Revoke").click();
  await node.waitFor({ state: "detached" });
}

async function mcpClient(accessToken: string): Promise<Client> {
  const client = new Client({ name: "oauth-browser-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${vault.url}/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${accessToken}` } },
    }),
  );
  return client;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content.map((c) => c.text).join("");

describe("OAuth in Chromium", () => {
  it("a client registers, the person approves a read-only folder, the client reads it, and revoking it in the console ends access and refresh", async () => {
    const registered = await fetch(`${vault.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Browser test client", redirect_uris: [callbackUrl] }),
    });
    expect(registered.status).toBe(201);
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const verifier = b64url(randomBytes(32));
    const state = b64url(randomBytes(12));
    const authorize = new URL(`${vault.url}/oauth/authorize`);
    for (const [k, v] of Object.entries({
      response_type: "code",
      client_id: clientId,
      redirect_uri: callbackUrl,
      code_challenge: b64url(createHash("sha256").update(verifier).digest()),
      code_challenge_method: "S256",
      state,
      resource: `${vault.url}/mcp`,
    })) {
      authorize.searchParams.set(k, v);
    }

    const page = await context.newPage();
    await approveInBrowser(page, authorize.href, `${vault.url}/ui#${rootToken}`, "01-consent");
    await page.waitForURL((u) => u.href.startsWith(callbackUrl));
    const back = new URL(page.url());
    expect(back.searchParams.get("state")).toBe(state);
    expect(back.searchParams.get("iss")).toBe(vault.url);
    await shot(page, "02-back-at-client");

    const exchanged = await fetch(
      `${vault.url}/oauth/token`,
      form({
        grant_type: "authorization_code",
        code: back.searchParams.get("code")!,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: callbackUrl,
        resource: `${vault.url}/mcp`,
      }),
    );
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string; token_type: string };
    expect(tokens.token_type).toBe("Bearer");

    const client = await mcpClient(tokens.access_token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("read_text_file");
    expect(names).not.toContain("write_file");
    const listing = text(await client.callTool({ name: "list_directory", arguments: { path: "" } }));
    expect(listing).toContain("a.txt");
    expect(listing).toContain("b.txt");
    expect(listing).not.toContain("secret");
    expect(text(await client.callTool({ name: "read_text_file", arguments: { path: "a.txt" } }))).toBe("hi there");
    // A write through the read-only grant is refused and writes nothing.
    const write = client.callTool({ name: "write_file", arguments: { path: "new.txt", content: "x" } });
    await expect(write.then((r) => (r as { isError?: boolean }).isError)).resolves.toBe(true);
    const after = await fetch(`${vault.url}/object/${rootToken}/stat?path=docs/new.txt`);
    expect(after.status).toBe(404);

    await revokeInConsole(page, "OAuth: Browser test client (unverified client)");
    expect((await children()).map((c) => c.label)).not.toContain("OAuth: Browser test client (unverified client)");
    await expect(client.callTool({ name: "read_text_file", arguments: { path: "a.txt" } })).rejects.toThrow();
    const direct = await fetch(`${vault.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(direct.status).toBe(401);
    const refreshed = await fetch(
      `${vault.url}/oauth/token`,
      form({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId }),
    );
    expect(refreshed.status).toBe(400);
    expect(((await refreshed.json()) as { error: string }).error).toBe("invalid_grant");
    await client.close();
    await page.close();
    // Nothing the launcher printed names a secret the flow handed out.
    for (const secret of [tokens.access_token, tokens.refresh_token, back.searchParams.get("code")!]) {
      expect(vault.output()).not.toContain(secret);
    }
  }, 120_000);

  it("a consent approved with a revoked cap shows no such capability and mints nothing", async () => {
    const minted = await fetch(`${vault.url}/object/${rootToken}/subdir`, {
      method: "POST",
      body: JSON.stringify({ path: "docs", rights: ["read", "list", "subdir"], label: "soon revoked" }),
    });
    const dead = (await minted.json()) as { token: string; id: string };
    expect((await fetch(`${vault.url}/object/${rootToken}/children/${dead.id}`, { method: "DELETE" })).ok).toBe(true);
    const registered = await fetch(`${vault.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "Late client", redirect_uris: [callbackUrl] }),
    });
    const clientId = ((await registered.json()) as { client_id: string }).client_id;
    const authorize = new URL(`${vault.url}/oauth/authorize`);
    authorize.search = new URLSearchParams({
      response_type: "code",
      client_id: clientId,
      redirect_uri: callbackUrl,
      code_challenge: b64url(
        createHash("sha256")
          .update(b64url(randomBytes(32)))
          .digest(),
      ),
      code_challenge_method: "S256",
      state: "s",
    }).toString();
    const before = await children();
    const page = await context.newPage();
    const answers: number[] = [];
    page.on("response", (r) => {
      if (r.url() === `${vault.url}/oauth/authorize` && r.request().method() === "POST") answers.push(r.status());
    });
    await approveInBrowser(page, authorize.href, dead.token, "04-consent-dead-cap");
    await page.locator("p[role=alert]", { hasText: "no such capability" }).waitFor();
    await shot(page, "05-dead-cap-refused");
    expect(answers).toEqual([404]);
    expect(page.url()).toBe(`${vault.url}/oauth/authorize`);
    // The form is still there to try another cap, and nothing was minted anywhere.
    await page.locator("#cap").waitFor();
    expect(await children()).toEqual(before);
    expect(JSON.stringify(await children())).not.toContain("Late client");
    await page.close();
  }, 60_000);

  it("mcp-remote completes the flow over stdio: the URL it would open is consented in Chromium, then it lists and reads", async () => {
    const configDir = await mkdtemp(path.join(os.tmpdir(), "capvault-mcp-remote-"));
    // The "browser" mcp-remote starts only records the URL: no desktop browser is ever launched.
    const opened = path.join(configDir, "opened-urls");
    const fakeBrowser = path.join(configDir, "record-url");
    await writeFile(fakeBrowser, `#!/bin/sh\nprintf '%s\\n' "$1" >> '${opened}'\n`);
    await chmod(fakeBrowser, 0o700);
    const env: Record<string, string> = {};
    for (const k of ["PATH", "HOME", "TMPDIR", "LANG"]) if (process.env[k]) env[k] = process.env[k]!;
    Object.assign(env, { MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: fakeBrowser });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, `${vault.url}/mcp`, "--transport", "http-only"],
      env,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: "via-mcp-remote", version: "1.0.0" });
    const page = await context.newPage();
    try {
      const connected = client.connect(transport);
      connected.catch(() => {}); // awaited below; a failure before then is reported there
      // Each wait is for mcp-remote (a process of its own, which starts the fake opener, another) to get
      // there: bounded by the test's own timeout, not by a guess of how long a loaded machine takes.
      await expect.poll(() => /visiting:\s*\n(\S+)/.exec(stderr)?.[1], { timeout: 110_000 }).toBeTruthy();
      const url = /visiting:\s*\n(\S+)/.exec(stderr)![1]!;
      expect(new URL(url).origin + new URL(url).pathname).toBe(`${vault.url}/oauth/authorize`);
      // The opener was handed that URL (mcp-remote re-encodes spaces in it).
      const state = new URL(url).searchParams.get("state")!;
      await expect.poll(() => readFile(opened, "utf8").catch(() => ""), { timeout: 110_000 }).toContain(state);
      // ...and took it (so mcp-remote tried none of its fallbacks, x-www-browser among them).
      await expect.poll(() => stderr, { timeout: 110_000 }).toContain("Browser opened automatically.");
      await approveInBrowser(page, url, rootToken, "06-consent-mcp-remote");
      await page.waitForURL((u) => u.hostname === "localhost" && u.pathname === "/oauth/callback");
      await shot(page, "07-mcp-remote-callback");
      await connected;
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("read_text_file");
      expect(names).not.toContain("write_file");
      expect(text(await client.callTool({ name: "read_text_file", arguments: { path: "b.txt" } }))).toBe("second");
      expect((await children()).map((c) => c.label)).toContain("OAuth: MCP CLI Proxy (unverified client)");
    } finally {
      await client.close();
      await page.close();
      await rm(configDir, { recursive: true, force: true });
    }
    await expect(stat(configDir)).rejects.toThrow();
  }, 120_000);
});
