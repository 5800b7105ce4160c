/**
 * The cap-scoped MCP endpoint through the official MCP client SDK against
 * the running launcher: tools offered per rights, each tool's happy path,
 * hostile paths as tool errors carrying the wire code, delegation with
 * create_subdir_cap, and no response naming the root prefix. The official
 * server's tools are in mcp-official-tools, the per-request bounds in
 * mcp-request-bounds, the transport and the endpoint in mcp-transport.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import type { Right } from "../../shared/rights.ts";
import { mcpClients } from "./mcp-client.ts";
import { expectNoPrefixOrHostPath, mcpEndpointVault } from "./mcp-endpoint-fixture.ts";
import type { SharedVault } from "./shared-vault.ts";

let vault: SharedVault;
let fs: FsCap;
/** Everything any MCP response carried (`seen`) is checked at the end for the root prefix. */
const { seen, connect, toolNames, call, ok, closeAll } = mcpClients();

beforeAll(async () => {
  ({ vault, fs } = await mcpEndpointVault("mcp-endpoint"));
});

afterAll(async () => {
  await closeAll();
});

/** The official filesystem server's tools in its order, then the cap's own. */
const ALL_TOOLS = [
  "read_file",
  "read_text_file",
  "read_media_file",
  "read_multiple_files",
  "write_file",
  "edit_file",
  "create_directory",
  "list_directory",
  "list_directory_with_sizes",
  "directory_tree",
  "move_file",
  "search_files",
  "get_file_info",
  "list_allowed_directories",
  "delete_file",
  "create_subdir_cap",
  "list_versions",
  "restore_version",
  "search_file_contents",
  "delete_directory",
  "read_text_lines",
];
const READ_TOOLS = ["read_file", "read_text_file", "read_media_file", "read_multiple_files"];
const LIST_TOOLS = ["list_directory", "list_directory_with_sizes", "directory_tree", "search_files"];
/** What a cap with read and list is offered (a read-only child's list too). */
const READ_LIST_TOOLS = [
  ...READ_TOOLS,
  ...LIST_TOOLS,
  "get_file_info",
  "list_allowed_directories",
  "list_versions",
  "search_file_contents",
  "read_text_lines",
];

describe("tools offered follow the cap's rights", () => {
  it("a cap with every right gets every tool, each saying paths are relative to the cap", async () => {
    const client = await connect(fs.url);
    expect(await toolNames(client)).toEqual(ALL_TOOLS);
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool.description, tool.name).toMatch(/relative to (the|this) capability's root/);
  });

  it.each<[Right[], string[]]>([
    [["read", "list"], READ_LIST_TOOLS],
    [["read"], [...READ_TOOLS, "get_file_info", "list_allowed_directories", "list_versions", "read_text_lines"]],
    [["list"], [...LIST_TOOLS, "get_file_info", "list_allowed_directories"]],
    // restore_version needs read too: its answer describes the old bytes.
    [["write"], ["write_file", "create_directory", "list_allowed_directories"]],
    [
      ["read", "write"],
      [
        ...READ_TOOLS,
        "write_file",
        "edit_file",
        "create_directory",
        "get_file_info",
        "list_allowed_directories",
        "list_versions",
        "restore_version",
        "read_text_lines",
      ],
    ],
    [["delete"], ["list_allowed_directories", "delete_file"]],
    [
      ["write", "delete"],
      ["write_file", "create_directory", "move_file", "list_allowed_directories", "delete_file"],
    ],
    [["subdir"], ["list_allowed_directories", "create_subdir_cap"]],
  ])("rights %j → %j", async (rights, expected) => {
    const sub = await fs.subdir({ path: "", rights });
    expect(await toolNames(await connect(sub.url))).toEqual(expected);
  });

  it("a tool the cap lacks the right for cannot be called anyway", async () => {
    await fs.write("guarded.md", "keep");
    const readOnly = await connect((await fs.subdir({ path: "", rights: ["read", "list"] })).url);
    const result = await call(readOnly, "delete_file", { path: "guarded.md" });
    expect(result.isError).toBe(true);
    expect(await fs.readText("guarded.md")).toBe("keep");
  });
});

describe("each tool on a full cap", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(fs.url);
  });

  it("write_file, read_file, get_file_info", async () => {
    expect(await ok(client, "write_file", { path: "notes/a.md", content: "line1\nline2\nline3\n" })).toBe(
      "Successfully wrote to notes/a.md",
    );
    expect(await ok(client, "read_file", { path: "notes/a.md" })).toBe("line1\nline2\nline3\n");
    const info = await ok(client, "get_file_info", { path: "notes/a.md" });
    expect(info).toMatch(
      /^size: 18\nmodified: \w{3} \w{3} \d\d \d{4} [\d:]{8} GMT\+0000 \(.+\)\nisDirectory: false\nisFile: true\netag: [0-9a-f]{32}\ncontentType: text\/plain; charset=utf-8$/,
    );
    expect(await ok(client, "get_file_info", { path: "notes" })).toBe("isDirectory: true\nisFile: false");
    expect(await ok(client, "get_file_info", {})).toBe("isDirectory: true\nisFile: false");
  });

  it("edit_file returns a diff, writes only without dryRun, and refuses ambiguous edits", async () => {
    const diff = [
      "```diff",
      "Index: notes/a.md",
      "===================================================================",
      "--- notes/a.md\toriginal",
      "+++ notes/a.md\tmodified",
      "@@ -1,3 +1,3 @@",
      " line1",
      "-line2",
      "+LINE2",
      " line3",
      "```",
      "",
      "",
    ].join("\n");
    const edits = [{ oldText: "line2", newText: "LINE2" }];
    expect(await ok(client, "edit_file", { path: "notes/a.md", edits, dryRun: true })).toBe(diff);
    expect(await fs.readText("notes/a.md")).toBe("line1\nline2\nline3\n");
    expect(await ok(client, "edit_file", { path: "notes/a.md", edits })).toBe(diff);
    expect(await fs.readText("notes/a.md")).toBe("line1\nLINE2\nline3\n");

    const ambiguous = await call(client, "edit_file", {
      path: "notes/a.md",
      edits: [{ oldText: "line", newText: "x" }],
    });
    expect(ambiguous).toEqual({
      isError: true,
      text: "bad_request: edit 1: oldText appears more than once; include more surrounding text to make it unique",
    });
    const partly = await call(client, "edit_file", {
      path: "notes/a.md",
      edits: [
        { oldText: "line1", newText: "first" },
        { oldText: "absent", newText: "x" },
      ],
    });
    expect(partly).toEqual({
      isError: true,
      text: "bad_request: edit 2: oldText does not appear verbatim in the file",
    });
    expect(await fs.readText("notes/a.md")).toBe("line1\nLINE2\nline3\n");
    expect(await call(client, "edit_file", { path: "notes/none.md", edits })).toEqual({
      isError: true,
      text: "not_found: nothing at that path",
    });
  });

  it("list_directory and directory_tree", async () => {
    await fs.write("top.md", "t");
    await fs.write("notes/deep/er/est.md", "d");
    expect(await ok(client, "list_directory", { path: "" })).toBe("[FILE] guarded.md\n[DIR] notes\n[FILE] top.md");
    expect(await ok(client, "list_directory", { path: "notes" })).toBe("[FILE] a.md\n[DIR] deep");
    // depth: the recursive listing of GET /list, through the same cap.
    expect(await ok(client, "list_directory", { path: "notes", depth: 0 })).toBe("[FILE] a.md\n[FILE] deep/er/est.md");
    expect(await ok(client, "list_directory", { path: "/notes", depth: 2 })).toBe("[FILE] a.md\n[DIR] deep/er");
    expect(await ok(client, "list_directory", { path: "notes", depth: 1 })).toBe("[FILE] a.md\n[DIR] deep");
    expect((await call(client, "list_directory", { path: "", depth: 513 })).isError).toBe(true);
    expect(await call(client, "list_directory", { path: "..", depth: 0 })).toEqual({
      isError: true,
      text: "path_escapes: path escapes",
    });
    const tree = JSON.parse(await ok(client, "directory_tree", { path: "notes", maxDepth: 2 }));
    expect(tree).toEqual([
      { name: "a.md", type: "file" },
      { name: "deep", type: "directory", children: [{ name: "er", type: "directory", truncated: true }] },
    ]);
    const tooDeep = await call(client, "directory_tree", { path: "", maxDepth: 99 });
    expect(tooDeep.isError).toBe(true);
  });

  it("move_file and delete_file", async () => {
    expect(await ok(client, "move_file", { source: "top.md", destination: "moved/top.md" })).toBe(
      "Successfully moved top.md to moved/top.md",
    );
    expect(await fs.readText("moved/top.md")).toBe("t");
    await fs.write("other.md", "o");
    expect(await call(client, "move_file", { source: "other.md", destination: "moved/top.md" })).toMatchObject({
      isError: true,
      text: expect.stringMatching(/^conflict: /),
    });
    expect(await fs.readText("other.md")).toBe("o");
    expect(await ok(client, "delete_file", { path: "moved/top.md" })).toBe("Successfully deleted moved/top.md");
    await expect(fs.stat("moved/top.md")).rejects.toMatchObject({ code: "not_found" });
  });

  it("create_subdir_cap hands out a working cap with no more rights, scoped to the folder", async () => {
    const minted = JSON.parse(
      await ok(client, "create_subdir_cap", { path: "notes", rights: ["read", "list"], label: "sub-agent" }),
    );
    expect(minted).toEqual({
      url: expect.stringMatching(/\/object\/[a-z2-7]{48}$/),
      id: expect.any(String),
      rights: ["read", "list"],
      expiresAt: null,
    });
    const child = await connect(minted.url);
    expect(await toolNames(child)).toEqual(READ_LIST_TOOLS);
    expect(await ok(child, "read_file", { path: "a.md" })).toBe("line1\nLINE2\nline3\n");
    expect(await call(child, "read_file", { path: "../top.md" })).toEqual({
      isError: true,
      text: "path_escapes: path escapes",
    });
    expect(await call(child, "read_file", { path: "../other.md" })).toEqual({
      isError: true,
      text: "path_escapes: path escapes",
    });

    // The grandchild can only narrow further.
    const ttl = JSON.parse(await ok(client, "create_subdir_cap", { path: "notes", rights: ["read"], ttlSeconds: 60 }));
    expect(Date.parse(ttl.expiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    const narrow = await connect((await fs.subdir({ path: "notes", rights: ["read", "subdir"] })).url);
    expect(await call(narrow, "create_subdir_cap", { path: "", rights: ["read", "write"] })).toEqual({
      isError: true,
      text: "forbidden: a child cannot hold rights its parent lacks",
    });
  });
});

describe("hostile paths come back as tool errors carrying the wire code", () => {
  it.each<[string, Record<string, unknown>, string]>([
    ["read_file", { path: "../../../etc/passwd" }, "path_escapes: path escapes"],
    ["read_file", { path: "//etc/passwd" }, "absolute_path: absolute paths forbidden"],
    ["read_file", { path: "/../etc/passwd" }, "path_escapes: path escapes"],
    ["read_file", { path: "C:\\Windows\\win.ini" }, "absolute_path: absolute paths forbidden"],
    ["read_file", { path: "a/./b" }, "invalid_path: empty and '.' segments are not allowed"],
    ["read_file", { path: "" }, "invalid_path: a file operation needs a file name"],
    ["write_file", { path: "notes/../../x.md", content: "x" }, "path_escapes: path escapes"],
    ["edit_file", { path: "../x.md", edits: [{ oldText: "a", newText: "b" }] }, "path_escapes: path escapes"],
    ["list_directory", { path: ".." }, "path_escapes: path escapes"],
    ["list_directory", { path: "//" }, "absolute_path: absolute paths forbidden"],
    ["directory_tree", { path: "~/" }, "absolute_path: absolute paths forbidden"],
    ["get_file_info", { path: "a/../.." }, "path_escapes: path escapes"],
    ["delete_file", { path: "../notes/a.md" }, "path_escapes: path escapes"],
    ["move_file", { source: "notes/a.md", destination: "../a.md" }, "path_escapes: path escapes"],
    ["move_file", { source: "//etc/passwd", destination: "p.md" }, "absolute_path: absolute paths forbidden"],
    ["create_subdir_cap", { path: ".." }, "path_escapes: path escapes"],
    ["create_subdir_cap", { path: "//x" }, "absolute_path: absolute paths forbidden"],
    // The walking tools take the leading `/` off once too, not once per layer.
    ["directory_tree", { path: "//notes" }, "absolute_path: absolute paths forbidden"],
    ["search_files", { path: "//notes", pattern: "*" }, "absolute_path: absolute paths forbidden"],
  ])("%s %j → %s", async (name, args, text) => {
    const client = await connect(fs.url);
    expect(await call(client, name, args)).toEqual({ isError: true, text });
    expect(await fs.readText("notes/a.md")).toBe("line1\nLINE2\nline3\n");
  });
});

describe("secrecy", () => {
  it("no response, description or instruction names the root prefix or a host path", () => {
    expectNoPrefixOrHostPath(seen, vault, 30);
  });
});
