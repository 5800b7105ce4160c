/**
 * The cap's MCP endpoint on the current spec, against the running launcher:
 * Origin checks, files and skills as resources, and both protocol eras.
 */
import {
  Client as ClientV2,
  ProtocolError,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { RESOURCES_PAGE } from "../../worker/mcp/cap-resources.ts";
import { REQUEST_MAX_ANSWER_CHARS } from "../../worker/mcp/request-budget.ts";
import { mcpClients, postMcp } from "./mcp-client.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";
import { mintRoot } from "./test-vault.ts";

let vault: SharedVault;
let fs: FsCap;
const { connect, keep, closeAll } = mcpClients();

beforeAll(async () => {
  vault = await sharedVault("mcp-2026");
  fs = new FsCap((await mintRoot(vault, { backend: "r2", prefix: "mcp-2026/", label: "mcp-2026" })).url);
});

afterAll(async () => {
  await closeAll();
});

/** The official SDK v2's client; `pin` a revision (2026-07-28), or speak 2025 as its default does. */
async function connectV2(capUrl: string, pin?: string, headers: Record<string, string> = {}): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "capvault-test", version: "1.0.0" },
    pin ? { versionNegotiation: { mode: { pin } } } : {},
  );
  await client.connect(new StreamableHTTPClientTransportV2(new URL(`${capUrl}/mcp`), { requestInit: { headers } }));
  return keep(client);
}

/** A ping with no protocol version header, so only `headers` decide its fate. */
const ping = (capUrl: string, headers: Record<string, string>) =>
  postMcp(capUrl, { jsonrpc: "2.0", id: 1, method: "ping" }, headers);

describe("Origin", () => {
  it("refuses a foreign Origin with 403 forbidden, a DNS-rebound Host included, and runs nothing", async () => {
    for (const headers of <Record<string, string>[]>[
      { origin: "http://evil.example.com" },
      { origin: "http://evil.example.com", host: "evil.example.com" },
      { origin: "null" },
    ]) {
      const response = await ping(fs.url, headers);
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(await response.json()).toEqual({
        error: {
          code: "forbidden",
          message:
            "requests from this Origin are refused: only the vault's own origin and loopback origins may use MCP",
        },
      });
    }
    // The same 403 for a token that names no cap: the Origin is judged before the token.
    const unknown = await ping(`${vault.url}/object/not-a-token`, { origin: "http://evil.example.com" });
    expect(unknown.status).toBe(403);
  });

  it("serves the vault's own origin, loopback origins and clients that send none, the official client included", async () => {
    for (const origin of [new URL(vault.url).origin, "http://localhost:6274", "http://127.0.0.1:1"]) {
      expect((await ping(fs.url, { origin })).status, origin).toBe(200);
    }
    expect((await ping(fs.url, {})).status).toBe(200);
    const client = await connect(fs.url, { origin: "http://localhost:6274" });
    await expect(client.ping()).resolves.toBeDefined();
    await expect(connect(fs.url, { origin: "https://evil.example.com" })).rejects.toThrow(/"code":"forbidden"/);
  });
});

const SKILL = "---\nname: fs-as-cap\ndescription: Reach files through a capability.\n---\n\n# Files as a cap\n";
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0xfe, 0x00]);

/** Every resource of a listing, following nextCursor; the pages it took. */
async function allResources(client: Client): Promise<{ uris: string[]; pages: number }> {
  const uris: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.listResources(cursor === undefined ? {} : { cursor });
    uris.push(...page.resources.map((r) => r.uri));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined);
  return { uris, pages };
}

async function mcpError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

describe("resources", () => {
  let cap: FsCap;
  beforeAll(async () => {
    cap = await fs.subdir({ path: "res", rights: ["read", "write", "list"] });
    const many = Array.from({ length: RESOURCES_PAGE + 5 }, (_, i) => `bulk/f${String(i).padStart(3, "0")}.txt`);
    for (let i = 0; i < many.length; i += 5) {
      await Promise.all(many.slice(i, i + 5).map((p) => cap.write(p, `text of ${p}`)));
    }
    await cap.write("notes/a b.md", "# A\n");
    await cap.write("image.png", PNG);
    await cap.write("skills/fs-as-cap/SKILL.md", SKILL);
    await cap.write("skills/fs-as-cap/scripts/run.sh", "echo hi\n");
  });

  it("lists every file of the cap as a file: resource, paged, and each skill folder as a skill: resource", async () => {
    const client = await connect(cap.url);
    const { uris, pages } = await allResources(client);
    expect(pages).toBe(2);
    expect(uris).toHaveLength(RESOURCES_PAGE + 5 + 4 + 1);
    expect(new Set(uris).size).toBe(uris.length);
    expect(uris).toContain("file:///bulk/f000.txt");
    expect(uris).toContain("file:///notes/a%20b.md");
    expect(uris).toContain("file:///skills/fs-as-cap/SKILL.md");
    expect(uris).toContain("skill://skills/fs-as-cap/SKILL.md");
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(["file:///{+path}", "skill://{+skill}/SKILL.md"]);
  });

  it("reads text as text, other bytes as base64, and a skill by its skill: URI", async () => {
    const client = await connect(cap.url);
    expect((await client.readResource({ uri: "file:///notes/a%20b.md" })).contents).toEqual([
      { uri: "file:///notes/a%20b.md", mimeType: "text/markdown", text: "# A\n" },
    ]);
    expect((await client.readResource({ uri: "file:///image.png" })).contents).toEqual([
      { uri: "file:///image.png", mimeType: "image/png", blob: Buffer.from(PNG).toString("base64") },
    ]);
    const skill = await client.readResource({ uri: "skill://skills/fs-as-cap/SKILL.md" });
    expect(skill.contents).toEqual([
      { uri: "skill://skills/fs-as-cap/SKILL.md", mimeType: "text/markdown", text: SKILL },
    ]);
  });

  it("answers a missing file as resource not found, and never reads outside the cap", async () => {
    const client = await connect(cap.url);
    expect((await mcpError(client.readResource({ uri: "file:///missing.txt" }))).code).toBe(-32002);
    await fs.write("outside.txt", "secret");
    for (const uri of [
      "file:///../outside.txt",
      "file:///%2E%2E/outside.txt",
      "file:////outside.txt",
      "https://x/y",
      "skill://skills/fs-as-cap/run.sh",
    ]) {
      const error = await mcpError(client.readResource({ uri }));
      expect(error.message, uri).not.toContain("secret");
      expect(error.message, uri).not.toContain("mcp-2026/");
    }
  });

  it("follows the cap's rights: no resources without read, an empty list without list", async () => {
    const writeOnly = await connect((await fs.subdir({ path: "res", rights: ["write"] })).url);
    expect(writeOnly.getServerCapabilities()?.resources).toBeUndefined();
    const readOnly = await connect((await fs.subdir({ path: "res", rights: ["read"] })).url);
    expect((await readOnly.listResources()).resources).toEqual([]);
    expect((await readOnly.readResource({ uri: "file:///notes/a%20b.md" })).contents).toHaveLength(1);
  });

  it("charges reads to the request's answer budget: a batch past 16 Mi characters is refused past the budget", async () => {
    const big = "x".repeat(2 * 1024 * 1024);
    await cap.write("big.txt", big);
    const batch = Array.from({ length: 10 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i,
      method: "resources/read",
      params: { uri: "file:///big.txt" },
    }));
    const response = await postMcp(cap.url, batch, {});
    const answers = (await response.json()) as { result?: unknown; error?: { message: string } }[];
    // A read keeps room for its bytes as base64 (4 characters for 3 bytes), whatever it turns out to be.
    const fit = Math.floor((REQUEST_MAX_ANSWER_CHARS * 3) / 4 / big.length) + 1;
    expect(fit * big.length).toBeLessThanOrEqual(REQUEST_MAX_ANSWER_CHARS);
    expect(answers.filter((a) => a.result).length).toBe(fit);
    expect(answers.slice(fit).every((a) => /answers have used their budget/.test(a.error?.message ?? ""))).toBe(true);
  });
});

describe("both protocol eras on one endpoint", () => {
  let cap: FsCap;
  beforeAll(async () => {
    cap = await fs.subdir({ path: "eras", rights: ["read", "write", "list"] });
    await cap.write("hello.txt", "hello\n");
  });

  it("a 2026-07-28 client (SDK v2, no initialize, no session) lists and runs the tools and resources a 2025 client does", async () => {
    const modern = await connectV2(cap.url, "2026-07-28");
    expect(modern.getProtocolEra()).toBe("modern");
    expect(modern.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    const legacy = await connect(cap.url);
    const modernTools = (await modern.listTools()).tools.map((t) => t.name);
    expect(modernTools).toEqual((await legacy.listTools()).tools.map((t) => t.name));
    expect(modernTools).toContain("write_file");
    const written = await modern.callTool({
      name: "write_file",
      arguments: { path: "from-2026.txt", content: "new era\n" },
    });
    expect(written.isError).not.toBe(true);
    expect(await cap.readText("from-2026.txt")).toBe("new era\n");
    const listed = await modern.listResources();
    expect(listed.resources.map((r) => r.uri).sort()).toEqual(["file:///from-2026.txt", "file:///hello.txt"]);
    expect((await modern.readResource({ uri: "file:///hello.txt" })).contents).toEqual([
      { uri: "file:///hello.txt", mimeType: "text/plain", text: "hello\n" },
    ]);
  });

  it("at 2026-07-28 an unknown resource is -32602, and a foreign Origin is refused as in 2025", async () => {
    const modern = await connectV2(cap.url, "2026-07-28");
    const error = await modern.readResource({ uri: "file:///missing.txt" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32602);
    await expect(connectV2(cap.url, "2026-07-28", { origin: "http://evil.example.com" })).rejects.toThrow();
  });

  it("the SDK v2 client left to its default speaks 2025 and is served unchanged", async () => {
    const client = await connectV2(cap.url);
    expect(client.getProtocolEra()).toBe("legacy");
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("read_text_file");
  });

  it("a read-only cap offers no write tools in the 2026 era either", async () => {
    const readOnly = await connectV2((await fs.subdir({ path: "eras", rights: ["read", "list"] })).url, "2026-07-28");
    const names = (await readOnly.listTools()).tools.map((t) => t.name);
    expect(names).toContain("read_text_file");
    expect(names).not.toContain("write_file");
    const refused = await readOnly.callTool({ name: "write_file", arguments: { path: "x.txt", content: "x" } }).then(
      (r) => r,
      (e: unknown) => e,
    );
    expect(JSON.stringify(refused instanceof Error ? refused.message : refused)).toMatch(/write_file/);
  });
});
