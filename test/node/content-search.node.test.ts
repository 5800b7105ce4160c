/**
 * Content search from the clients against the running launcher: the SDK's
 * FsCap.search pages by cursor, and the MCP tool search_file_contents through
 * the official MCP client answers as ripgrep prints, is offered only with
 * read and list, and refuses what RE2 does not take; on R2 and on disk.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isCapError } from "../../clients/typescript/cap-error.ts";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import type { SearchPage } from "../../shared/wire-types.ts";
import { mcpClients } from "./mcp-client.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;
const mcp = mcpClients();

beforeAll(async () => {
  vault = await startTestVault();
}, 120_000);

afterAll(async () => {
  await mcp.closeAll();
  await vault?.stop();
});

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  let fs: FsCap;
  beforeAll(async () => {
    const root = new FsCap(backend === "r2" ? vault.rootCapUrl : vault.diskCapUrl);
    fs = await root.subdir({ path: `search-${randomUUID().slice(0, 8)}` });
    await fs.write("src/a.ts", "const a = 1; // TODO one\nexport {};\n");
    await fs.write("src/b.ts", "// todo two\n// TODO three\n");
    await fs.write("notes.md", "TODO in notes\n");
  });

  it("SDK: search answers matching lines and pages by cursor", async () => {
    const page = await fs.search("TODO", { path: "src", glob: "*.ts" });
    expect(page.matches!.map((m) => `${m.path}:${m.line}`)).toEqual(["src/a.ts:1", "src/b.ts:2"]);
    expect(page.cursor).toBeNull();
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const next: SearchPage = await fs.search("todo", { ignoreCase: true, mode: "files", limit: 1, cursor });
      seen.push(...next.files!);
      cursor = next.cursor;
    } while (cursor !== null);
    expect(seen).toEqual(["notes.md", "src/a.ts", "src/b.ts"]);
    const refused = await fs.search("(?<=x)y").catch((e: unknown) => e);
    expect(isCapError(refused) && refused.code).toBe("bad_request");
  });

  it("MCP: search_file_contents answers as ripgrep prints, with context and counts", async () => {
    const client = await mcp.connect(fs.url);
    expect(await mcp.ok(client, "search_file_contents", { path: "/src", pattern: "TODO", context: 1 })).toBe(
      "src/a.ts:1:const a = 1; // TODO one\nsrc/a.ts-2-export {};\nsrc/b.ts-1-// todo two\nsrc/b.ts:2:// TODO three",
    );
    expect(await mcp.ok(client, "search_file_contents", { pattern: "todo", ignoreCase: true, mode: "count" })).toBe(
      "notes.md:1\nsrc/a.ts:1\nsrc/b.ts:2",
    );
    const paged = await mcp.ok(client, "search_file_contents", { pattern: "TODO", mode: "files", limit: 1 });
    expect(paged).toMatch(/^notes\.md\n\(more files left to search: call again with cursor "[A-Za-z0-9_-]+"\)$/);
    const bad = await mcp.call(client, "search_file_contents", { pattern: "(a)\\1" });
    expect(bad).toMatchObject({ isError: true });
    expect(bad.text).toMatch(/^bad_request: .*RE2/);
    expect(await mcp.ok(client, "search_file_contents", { pattern: "nowhere" })).toBe("No matches found");
  });

  it("MCP: the tool is offered only with read and list", async () => {
    const names = async (rights: ("read" | "list")[]) =>
      mcp.toolNames(await mcp.connect((await fs.subdir({ path: "", rights })).url));
    expect(await names(["read", "list"])).toContain("search_file_contents");
    expect(await names(["list"])).not.toContain("search_file_contents");
    expect(await names(["read"])).not.toContain("search_file_contents");
  });
});
