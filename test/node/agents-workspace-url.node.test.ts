/**
 * CapWorkspace over a cap URL (clients/agents-workspace/vault-cap-url.ts), for
 * an agent with no service binding to the vault: Think's tool set
 * (`@cloudflare/computer`'s createAITools) and shell's WorkspaceFsLike run
 * over HTTP against a running vault, on both backends. What lands is checked
 * with plain requests, never through the adapter.
 */
import { type CreateAIToolsOptions, createAITools } from "@cloudflare/computer/tools/ai-sdk";
import type { WorkspaceFsLike } from "@cloudflare/shell";
import type { ToolSet } from "ai";
import { beforeAll, describe, expect, it } from "vitest";
import { CapWorkspace, vaultCapOfUrl } from "../../clients/agents-workspace/index.ts";
import { FsCap, HolderKey } from "../../clients/typescript/index.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

let vault: SharedVault;
beforeAll(async () => {
  vault = await sharedVault("agents-workspace-url");
});

const q = (p: string) => `?path=${encodeURIComponent(p)}`;
/** A file's text by a plain GET, or its status. */
async function httpText(capUrl: string, path: string): Promise<string> {
  const res = await fetch(`${capUrl}/file${q(path)}`);
  return res.status === 200 ? res.text() : `(status ${res.status})`;
}

async function run(tools: ToolSet, name: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const tool = tools[name];
  if (!tool?.execute) throw new Error(`no tool ${name}`);
  try {
    return (await tool.execute(input, { toolCallId: `call-${name}`, messages: [], context: {} })) as never;
  } catch (error) {
    // A tool that throws: the AI SDK hands the model the message.
    return { error: (error as Error).message };
  }
}

describe.each(["r2", "disk"] as const)("CapWorkspace over a cap URL (%s)", (backend) => {
  const rootUrl = () => (backend === "r2" ? vault.rootCapUrl : vault.diskCapUrl);
  const fresh = async () => {
    const minted = await new FsCap(rootUrl()).subdir({ path: `u-${crypto.randomUUID()}` });
    return minted.url;
  };

  it("runs Think's tools: write, read, edit, ls, find, grep, delete; the vault holds what they did", async () => {
    const url = await fresh();
    const ws = new CapWorkspace(vaultCapOfUrl(url), { mount: "/workspace" });
    const tools = createAITools({ workspace: ws satisfies CreateAIToolsOptions["workspace"] });
    expect(await run(tools, "write", { path: "/workspace/notes/a.md", content: "alpha\nbeta\n" })).not.toHaveProperty(
      "error",
    );
    expect(await httpText(url, "notes/a.md")).toBe("alpha\nbeta\n");
    expect((await run(tools, "read", { path: "/workspace/notes/a.md" })).content).toBe("alpha\nbeta");
    expect(
      await run(tools, "edit", { path: "/workspace/notes/a.md", edits: [{ oldText: "beta", newText: "gamma" }] }),
    ).not.toHaveProperty("error");
    expect(await httpText(url, "notes/a.md")).toBe("alpha\ngamma\n");
    const ls = (await run(tools, "ls", { path: "/workspace" })) as { entries: { name: string }[] };
    expect(ls.entries.map((e) => e.name)).toEqual(["notes"]);
    const found = (await run(tools, "find", { path: "/workspace", pattern: "**/*.md" })) as {
      entries: { path: string }[];
    };
    expect(found.entries.map((e) => e.path)).toEqual(["/workspace/notes/a.md"]);
    const grep = (await run(tools, "grep", { path: "/workspace", query: "gamma" })) as {
      matches: { path: string; line: number }[];
    };
    expect(grep.matches.map((m) => `${m.path}:${m.line}`)).toEqual(["/workspace/notes/a.md:2"]);
    expect(await run(tools, "delete", { path: "/workspace/notes/a.md" })).not.toHaveProperty("error");
    expect(await httpText(url, "notes/a.md")).toBe("(status 404)");
  });

  it("is shell's WorkspaceFsLike too: a stream written with its length, read back as a stream", async () => {
    const url = await fresh();
    const ws = new CapWorkspace(vaultCapOfUrl(url));
    const shell: WorkspaceFsLike = ws;
    const bytes = new Uint8Array(300_000).map((_, i) => i % 251);
    await shell.writeFileBytes("/big.bin", bytes);
    const stream = await ws.readFileStream("/big.bin");
    expect(stream).not.toBeNull();
    expect(new Uint8Array(await new Response(stream).arrayBuffer())).toEqual(bytes);
    expect(await shell.readFile("/missing.md")).toBeNull();
  });

  it("a read-only cap refuses writes with EACCES (forbidden) and a revoked one every call, naming no secret", async () => {
    const url = await fresh();
    await new FsCap(url).write("keep.md", "original\n");
    const reader = await new FsCap(url).subdir({ path: "", rights: ["read", "list"] });
    const tools = createAITools({ workspace: new CapWorkspace(vaultCapOfUrl(reader.url)) });
    expect((await run(tools, "read", { path: "/keep.md" })).content).toBe("original");
    const write = await run(tools, "write", { path: "/keep.md", content: "changed" });
    expect(String(write.error)).toMatch(/^EACCES: .*forbidden: this operation needs the write right\)$/);
    expect(await httpText(url, "keep.md")).toBe("original\n");

    await new FsCap(reader.url).revoke();
    const read = await run(tools, "read", { path: "/keep.md" });
    expect(read).toEqual({ error: "EACCES: stat '/keep.md' (no_such_cap: unknown capability)" });
    for (const secret of [new URL(reader.url).pathname.split("/")[2]!, new URL(url).pathname.split("/")[2]!])
      expect(JSON.stringify(read)).not.toContain(secret);
  });

  it("a path outside the mount is refused before any request; one climbing with '..' by the vault (path_escapes)", async () => {
    const url = await fresh();
    const tools = createAITools({ workspace: new CapWorkspace(vaultCapOfUrl(url), { mount: "/workspace" }) });
    const said = async (path: string) => String((await run(tools, "write", { path, content: "x" })).error);
    expect(await said("/etc/passwd")).toBe("EACCES: stat '/etc/passwd' (outside the workspace's mount /workspace)");
    for (const path of ["/workspace/../etc/passwd", "/workspace/../../x"])
      expect(await said(path)).toBe(`EINVAL: stat '${path}' (path_escapes: path escapes)`);
    expect((await new FsCap(url).listPage("", { depth: 0 })).entries).toEqual([]);
  });

  it("a holder-bound cap works with its key (each request proven), and without it is refused as unknown", async () => {
    const url = await fresh();
    const key = await HolderKey.generate();
    const bound = await new FsCap(url).subdir({ path: "", holder: key.publicJwk });
    const proven = new CapWorkspace(vaultCapOfUrl(bound.url, { holder: key }));
    await proven.writeFile("/mine.md", "proven");
    expect(await httpText(url, "mine.md")).toBe("proven");
    const unproven = new CapWorkspace(vaultCapOfUrl(bound.url));
    await expect(unproven.readFile("/mine.md")).rejects.toMatchObject({ code: "EACCES", vaultCode: "no_such_cap" });
  });
});
