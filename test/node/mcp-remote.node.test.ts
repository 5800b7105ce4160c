/**
 * The real `mcp-remote` (a stdio <-> Streamable HTTP bridge many desktop
 * clients run) against the vault's header route, driven over stdio by the
 * official SDK's client: the token reaches mcp-remote through its
 * environment and a `${CAPVAULT_TOKEN}` placeholder, never its argv.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

/** mcp-remote fills `${VAR}` in a header from its environment. */
const PLACEHOLDER = "$" + "{CAPVAULT_TOKEN}";
let vault: SharedVault;
let configDir: string;

beforeAll(async () => {
  vault = await sharedVault("mcp-remote");
  configDir = await mkdtemp(path.join(os.tmpdir(), "capvault-mcp-remote-"));
});

afterAll(async () => {
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

it("lists tools and reads a file through mcp-remote on /cap/mcp, the token in its environment only", async () => {
  const token = new URL(vault.rootCapUrl).pathname.split("/").at(-1)!;
  await new FsCap(vault.rootCapUrl).write("notes/hello.md", "hello through mcp-remote\n");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      path.join(PROJECT_ROOT, "node_modules/mcp-remote/dist/proxy.js"),
      `${vault.url}/cap/mcp`,
      "--header",
      `Authorization: Bearer ${PLACEHOLDER}`,
      "--transport",
      "http-only",
      "--allow-http",
    ],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: configDir,
      MCP_REMOTE_CONFIG_DIR: configDir,
      CAPVAULT_TOKEN: token,
    },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "capvault-test", version: "1.0.0" });
  try {
    await client.connect(transport);
    const argv = execFileSync("ps", ["-o", "args=", "-p", String(transport.pid)], { encoding: "utf8" });
    expect(argv).toContain("mcp-remote/dist/proxy.js");
    expect(argv).toContain(PLACEHOLDER);
    expect(argv).not.toContain(token);

    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["read_text_file", "write_file", "list_directory"]),
    );
    const read = (await client.callTool({ name: "read_text_file", arguments: { path: "notes/hello.md" } })) as {
      content: { text: string }[];
      isError?: boolean;
    };
    expect(read.isError, stderr).not.toBe(true);
    expect(read.content[0]!.text).toBe("hello through mcp-remote\n");
    const resource = await client.readResource({ uri: "file:///notes/hello.md" });
    expect(resource.contents[0]).toMatchObject({ uri: "file:///notes/hello.md", text: "hello through mcp-remote\n" });
    // What mcp-remote printed names the placeholder, never the token.
    expect(stderr).not.toContain(token);
  } finally {
    await client.close();
  }
});
