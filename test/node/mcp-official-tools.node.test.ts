/**
 * The official filesystem MCP server's tools on the cap-scoped endpoint,
 * through the official MCP client SDK against the running launcher: the
 * leading `/`, head and tail, batches of reads, media, sizes, globs (and
 * hostile ones), links out of a disk root, and the official result shapes.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { mcpClients } from "./mcp-client.ts";
import { expectNoPrefixOrHostPath, mcpEndpointVault } from "./mcp-endpoint-fixture.ts";
import type { SharedVault } from "./shared-vault.ts";

let vault: SharedVault;
let fs: FsCap;
/** Everything any MCP response carried (`seen`) is checked at the end for the root prefix. */
const { seen, connect, call, ok, closeAll } = mcpClients();

beforeAll(async () => {
  ({ vault, fs } = await mcpEndpointVault("mcp-official-tools"));
});

afterAll(async () => {
  await closeAll();
});

describe("the official filesystem server's tools", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(fs.url);
    await fs.write("parity/lines.txt", "one\ntwo\r\nthree\nfour");
    await fs.write("parity/big.bin", "x".repeat(2048));
    await fs.write("parity/sub/pic.png", "PNG");
    await fs.write("parity/sub/deep/note.md", "deep");
  });

  it("a leading / names the cap's root, as list_allowed_directories says", async () => {
    expect(await ok(client, "list_allowed_directories", {})).toBe("Allowed directories:\n/");
    expect(await ok(client, "list_directory", { path: "/" })).toBe(await ok(client, "list_directory", { path: "" }));
    expect(await ok(client, "read_text_file", { path: "/parity/lines.txt" })).toBe("one\ntwo\r\nthree\nfour");
    expect(await call(client, "read_file", { path: "/etc/passwd" })).toEqual({
      isError: true,
      text: "not_found: nothing at that path",
    });
  });

  it("read_text_file: head and tail as the official server cuts them, not both at once", async () => {
    const read = (args: Record<string, unknown>) => ok(client, "read_text_file", { path: "parity/lines.txt", ...args });
    expect(await read({ head: 2 })).toBe("one\ntwo\r");
    expect(await read({ head: 9 })).toBe("one\ntwo\r\nthree\nfour");
    expect(await read({ tail: 2 })).toBe("three\nfour");
    expect(await read({ tail: 3 })).toBe("two\nthree\nfour");
    expect(await read({ head: 0 })).toBe("one\ntwo\r\nthree\nfour");
    expect(await call(client, "read_text_file", { path: "parity/lines.txt", head: 1, tail: 1 })).toEqual({
      isError: true,
      text: "bad_request: give head or tail, not both",
    });
  });

  it("read_multiple_files answers each path, a failed one without stopping the rest", async () => {
    expect(await ok(client, "read_multiple_files", { paths: ["parity/sub/deep/note.md", "../x", "parity/none"] })).toBe(
      [
        "parity/sub/deep/note.md:\ndeep\n",
        "../x: Error - path_escapes: path escapes",
        "parity/none: Error - not_found: nothing at that path",
      ].join("\n---\n"),
    );
  });

  it("read_media_file: images as image content, other files as a resource named from the cap's root", async () => {
    const image = await client.callTool({ name: "read_media_file", arguments: { path: "parity/sub/pic.png" } });
    // The base64 once: no structuredContent repeating it.
    expect(image).toEqual({ content: [{ type: "image", data: btoa("PNG"), mimeType: "image/png" }] });
    const other = await client.callTool({ name: "read_media_file", arguments: { path: "parity/big.bin" } });
    expect(other.content).toEqual([
      {
        type: "resource",
        resource: { uri: "file:///parity/big.bin", mimeType: "application/octet-stream", blob: btoa("x".repeat(2048)) },
      },
    ]);
    seen.push(JSON.stringify(other));
  });

  it("list_directory_with_sizes sorts by name or by size, then totals", async () => {
    const byName = await ok(client, "list_directory_with_sizes", { path: "parity" });
    expect(byName).toBe(
      [
        `[FILE] ${"big.bin".padEnd(30)} ${"2.00 KB".padStart(10)}`,
        `[FILE] ${"lines.txt".padEnd(30)} ${"19 B".padStart(10)}`,
        `[DIR] ${"sub".padEnd(30)} `,
        "",
        "Total: 2 files, 1 directories",
        "Combined size: 2.02 KB",
      ].join("\n"),
    );
    const bySize = await ok(client, "list_directory_with_sizes", { path: "parity", sortBy: "size" });
    expect(bySize.split("\n").map((line) => line.split(/ +/)[1])).toEqual([
      "big.bin",
      "lines.txt",
      "sub",
      undefined,
      "2",
      "size:",
    ]);
  });

  it("search_files matches globs relative to its folder and answers paths from the cap's root", async () => {
    expect(await ok(client, "search_files", { path: "parity", pattern: "**/*.{md,png}" })).toBe(
      "parity/sub/deep/note.md\nparity/sub/pic.png",
    );
    expect(await ok(client, "search_files", { path: "/parity", pattern: "*" })).toBe(
      "parity/big.bin\nparity/lines.txt\nparity/sub",
    );
    expect(await ok(client, "search_files", { path: "parity", pattern: "**", excludePatterns: ["sub/**"] })).toBe(
      "parity/big.bin\nparity/lines.txt\nparity/sub",
    );
    expect(await ok(client, "search_files", { path: "parity", pattern: "*.zip" })).toBe("No matches found");
  });

  it("directory_tree leaves out excludePatterns, a name without '*' at any depth", async () => {
    const tree = JSON.parse(await ok(client, "directory_tree", { path: "parity/sub", excludePatterns: ["deep"] }));
    expect(tree).toEqual([{ name: "pic.png", type: "file" }]);
  });

  it("hostile globs cost a bounded number of steps, then are refused", async () => {
    // 40 names of 200 characters, each against patterns that make a backtracking matcher explode.
    await mkdir(path.join(vault.diskRoot, "globs"));
    for (let i = 0; i < 40; i++) await writeFile(path.join(vault.diskRoot, "globs", `${"a".repeat(197)}${i}`), "x");
    const disk = await connect(vault.diskCapUrl);
    const answers: Record<string, string> = {
      [`${"*a".repeat(400)}*b`]: "No matches found",
      [`${"**/".repeat(300)}b`]: "No matches found",
      // 48 alternatives, each a star before 300 characters: about 20,000 steps per name and alternative.
      [`*${"a".repeat(300)}{1,2,3,4}{1,2,3,4}{1,2,3}`]:
        "!bad_request: matching these glob patterns took more than 5000000 steps; use simpler patterns or search a subdirectory",
      [`${"{a,b}".repeat(7)}`]: "!bad_request: a glob pattern's {a,b} braces expand to at most 64 alternatives",
    };
    // A backtracking matcher would not answer these within the test's timeout; no clock of its own here.
    for (const [pattern, answer] of Object.entries(answers)) {
      const result = await call(disk, "search_files", { path: "globs", pattern });
      expect(`${result.isError ? "!" : ""}${result.text}`, pattern.slice(0, 20)).toBe(answer);
    }
    expect(await call(disk, "search_files", { path: "globs", pattern: "x".repeat(1025) })).toEqual({
      isError: true,
      text: "bad_request: a glob pattern holds at most 1024 characters",
    });
  });

  it("on disk, search_files, directory_tree and create_directory never pass a link leading out of the root", async () => {
    await mkdir(path.join(vault.diskRoot, "links", "in"), { recursive: true });
    await writeFile(path.join(vault.diskRoot, "links", "in", "kept.md"), "k");
    await symlink(path.dirname(vault.diskRoot), path.join(vault.diskRoot, "links", "out"));
    const disk = await connect(vault.diskCapUrl);
    // The vault does not list a link leading out, so nothing walks through it.
    expect(await ok(disk, "search_files", { path: "links", pattern: "**" })).toBe("links/in\nlinks/in/kept.md");
    expect(await ok(disk, "directory_tree", { path: "links" })).not.toContain("state");
    expect(await call(disk, "create_directory", { path: "links/out/x" })).toEqual({
      isError: true,
      text: "outside_root: resolved outside root",
    });
  });

  it("create_directory makes a folder that stays while empty, nothing on a refusal; a read-only cap cannot call it", async () => {
    expect(await ok(client, "create_directory", { path: "made/new" })).toBe("Successfully created directory made/new");
    expect(await ok(client, "create_directory", { path: "parity/sub" })).toBe(
      "Successfully created directory parity/sub",
    );
    expect(await call(client, "create_directory", { path: "parity/lines.txt/x" })).toMatchObject({
      isError: true,
      text: expect.stringMatching(/^conflict: /),
    });
    expect(await call(client, "create_directory", { path: "../up" })).toEqual({
      isError: true,
      text: "path_escapes: path escapes",
    });
    expect(await fs.stat("made/new")).toEqual({ type: "dir" });
    expect((await fs.listPage("made/new")).entries).toEqual([]);
    await expect(fs.stat("parity/lines.txt/x")).rejects.toMatchObject({ code: "not_found" });
    await expect(fs.stat("up")).rejects.toMatchObject({ code: "not_found" });
    const readOnly = await connect((await fs.subdir({ path: "", rights: ["read", "list"] })).url);
    expect(await call(readOnly, "create_directory", { path: "ro" })).toMatchObject({ isError: true });
    expect(await call(readOnly, "write_file", { path: "ro/x", content: "x" })).toMatchObject({ isError: true });
    await expect(fs.stat("ro")).rejects.toMatchObject({ code: "not_found" });
  });

  it("answers as the official server shapes its results: text also as structuredContent.content", async () => {
    const result = await client.callTool({ name: "read_text_file", arguments: { path: "parity/sub/deep/note.md" } });
    expect(result).toEqual({ content: [{ type: "text", text: "deep" }], structuredContent: { content: "deep" } });
  });
});

describe("secrecy", () => {
  it("no response, description or instruction names the root prefix or a host path", () => {
    expectNoPrefixOrHostPath(seen, vault, 20);
  });
});
