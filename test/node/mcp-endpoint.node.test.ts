/**
 * The cap-scoped MCP endpoint through the official MCP client SDK against
 * the running launcher: tools offered per rights, each tool's happy path,
 * hostile paths as tool errors carrying the wire code, delegation with
 * create_subdir_cap, and no response naming the root prefix.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import type { Right } from "../../shared/rights.ts";
import { mcpClients, postMcp as post, toolCall } from "./mcp-client.ts";
import { mintRoot, startTestVault, type TestVault } from "./test-vault.ts";

const PREFIX = "secret-prefix-xyz/";
let vault: TestVault;
let fs: FsCap;
/** Everything any MCP response carried (`seen`) is checked at the end for the root prefix. */
const { seen, connect, toolNames, call, ok, closeAll } = mcpClients();

beforeAll(async () => {
  vault = await startTestVault();
  fs = new FsCap((await mintRoot(vault, { backend: "r2", prefix: PREFIX, label: "mcp" })).url);
});

afterAll(async () => {
  await closeAll();
  await vault?.stop();
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
];
const READ_TOOLS = ["read_file", "read_text_file", "read_media_file", "read_multiple_files"];
const LIST_TOOLS = ["list_directory", "list_directory_with_sizes", "directory_tree", "search_files"];

describe("tools offered follow the cap's rights", () => {
  it("a cap with every right gets every tool, each saying paths are relative to the cap", async () => {
    const client = await connect(fs.url);
    expect(await toolNames(client)).toEqual(ALL_TOOLS);
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool.description, tool.name).toMatch(/relative to (the|this) capability's root/);
  });

  it.each<[Right[], string[]]>([
    [
      ["read", "list"],
      [
        ...READ_TOOLS,
        ...LIST_TOOLS,
        "get_file_info",
        "list_allowed_directories",
        "list_versions",
        "search_file_contents",
      ],
    ],
    [["read"], [...READ_TOOLS, "get_file_info", "list_allowed_directories", "list_versions"]],
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
    expect(await toolNames(child)).toEqual([
      ...READ_TOOLS,
      ...LIST_TOOLS,
      "get_file_info",
      "list_allowed_directories",
      "list_versions",
      "search_file_contents",
    ]);
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
    for (const [pattern, answer] of Object.entries(answers)) {
      const started = performance.now();
      const result = await call(disk, "search_files", { path: "globs", pattern });
      expect(`${result.isError ? "!" : ""}${result.text}`, pattern.slice(0, 20)).toBe(answer);
      // Not a speed assertion: a bound far above what this takes, far below an exponential blow-up.
      expect(performance.now() - started).toBeLessThan(20_000);
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

/** One raw POST to the endpoint: the official client sends no batches. */
async function postMcp(capUrl: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await post(capUrl, body);
  const text = await response.text();
  // Megabytes of a file read back hold no prefix; the head of the answer is checked like the rest.
  seen.push(text.slice(0, 100_000));
  return { status: response.status, json: JSON.parse(text) };
}

const ANSWER_SPENT =
  "!bad_request: this request's answers have used their budget of 16777216 characters; send further calls in a new request";

/** The text of each answer in a batch, by id, `!`-prefixed when it is a tool error. */
function batchTexts(json: unknown): string[] {
  const answers = (json as { id: number; result: { content: { text: string }[]; isError?: boolean } }[]).toSorted(
    (a, b) => a.id - b.id,
  );
  return answers.map((a) => `${a.result.isError ? "!" : ""}${a.result.content[0]!.text}`);
}

describe("bounded work per request", () => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(fs.url);
  });

  it("edit_file next to a 150 KB backtick run fences the diff with one backtick more", async () => {
    const run = "`".repeat(150_000);
    await fs.write("hostile/ticks.md", `${run}\nend\n`);
    const diff = await ok(client, "edit_file", {
      path: "hostile/ticks.md",
      edits: [{ oldText: "end", newText: "END" }],
    });
    const fence = `${run}\``;
    expect(diff.startsWith(`${fence}diff\n`)).toBe(true);
    expect(diff.endsWith(`\n ${run}\n-end\n+END\n${fence}\n\n`)).toBe(true);
    expect(await fs.readText("hostile/ticks.md")).toBe(`${run}\nEND\n`);
  });

  it("edit_file refuses more than 100 edits and writes nothing", async () => {
    const text = Array.from({ length: 101 }, (_, i) => `k${i};`).join("");
    await fs.write("hostile/many.md", text);
    const edits = Array.from({ length: 101 }, (_, i) => ({ oldText: `k${i};`, newText: "x" }));
    expect(await call(client, "edit_file", { path: "hostile/many.md", edits })).toEqual({
      isError: true,
      text: "bad_request: at most 100 edits per call; split them over several calls",
    });
    expect(await fs.readText("hostile/many.md")).toBe(text);
  });

  it("refuses a batch of 100 directory_tree calls before running any", async () => {
    const batch = Array.from({ length: 100 }, (_, id) => toolCall(id, "directory_tree", { path: "", maxDepth: 10 }));
    expect(await postMcp(fs.url, batch)).toEqual({
      status: 400,
      json: {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "Invalid Request: a batch holds at most 20 messages" },
      },
    });
  });

  it("answers a batch of 20 directory_tree calls until the request's 6,000 listed entries are spent, then refuses", async () => {
    // Placed straight into the disk root's real folder: 600 uploads would take longer than the test.
    await mkdir(path.join(vault.diskRoot, "wide"));
    for (let i = 0; i < 600; i++)
      await writeFile(path.join(vault.diskRoot, "wide", `f${String(i).padStart(3, "0")}.md`), "x");
    const { status, json } = await postMcp(
      vault.diskCapUrl,
      Array.from({ length: 20 }, (_, id) => toolCall(id, "directory_tree", { path: "wide" })),
    );
    expect(status).toBe(200);
    const texts = batchTexts(json);
    // Each call lists 600 entries and costs 601: nine fit in 6,000.
    for (const text of texts.slice(0, 9)) expect(JSON.parse(text)).toHaveLength(600);
    for (const text of texts.slice(9)) {
      expect(text).toBe(
        "!bad_request: this request has used its budget of 6000 listed entries; send further calls in a new request",
      );
    }
    // The next request has a budget of its own.
    const next = await postMcp(vault.diskCapUrl, toolCall(1, "directory_tree", { path: "wide" }));
    expect(JSON.parse(batchTexts([next.json])[0]!)).toHaveLength(600);
  });

  it("stops a walk that needs more than the request's 80 directory listings, answering what it listed", async () => {
    for (let i = 0; i < 101; i++) {
      await mkdir(path.join(vault.diskRoot, "folders", `d${i}`), { recursive: true });
      await writeFile(path.join(vault.diskRoot, "folders", `d${i}`, "f.md"), "x");
    }
    const note =
      "(stopped early: this request used its budget of 80 directory listings, 6000 listed entries or 200 storage calls; some directories were not listed, so ask for a subdirectory in another request)";
    const { json } = await postMcp(vault.diskCapUrl, toolCall(1, "directory_tree", { path: "folders", maxDepth: 2 }));
    const [text] = batchTexts([json]);
    expect(text!.endsWith(`\n${note}`)).toBe(true);
    const tree = JSON.parse(text!.slice(0, -note.length - 1)) as {
      name: string;
      truncated?: true;
      children?: unknown[];
    }[];
    // One listing for `folders`, 79 for its folders: the other 22 were not entered.
    expect(tree).toHaveLength(101);
    expect(tree.filter((d) => d.truncated).length).toBe(22);
    expect(tree.filter((d) => d.children?.length === 1).length).toBe(79);
    const search = await postMcp(
      vault.diskCapUrl,
      toolCall(2, "search_files", { path: "folders", pattern: "**/f.md" }),
    );
    const found = batchTexts([search.json])[0]!.split("\n");
    expect(found.at(-1)).toBe(note);
    expect(found.length - 1).toBe(79);
    const shallow = await postMcp(vault.diskCapUrl, toolCall(1, "directory_tree", { path: "folders", maxDepth: 1 }));
    expect(JSON.parse(batchTexts([shallow.json])[0]!)).toHaveLength(101);
  });

  it("refuses a listing past the request's 80 directory listings, after the calls before it are answered", async () => {
    for (let i = 0; i < 90; i++) {
      await mkdir(path.join(vault.diskRoot, "folders80", `d${i}`), { recursive: true });
      await writeFile(path.join(vault.diskRoot, "folders80", `d${i}`, "f.md"), "x");
    }
    // The first walk lists `folders80` and 79 of its 90 folders: all 80. The next calls' first listing is refused.
    const { status, json } = await postMcp(vault.diskCapUrl, [
      toolCall(1, "directory_tree", { path: "folders80", maxDepth: 2 }),
      toolCall(2, "directory_tree", { path: "folders80/d0" }),
      toolCall(3, "directory_tree", { path: "folders80/d1" }),
    ]);
    expect(status).toBe(200);
    const texts = batchTexts(json);
    const tree = JSON.parse(texts[0]!.slice(0, texts[0]!.indexOf("\n(stopped early"))) as { children?: unknown[] }[];
    expect(tree.filter((d) => d.children?.length === 1).length).toBe(79);
    const spent =
      "!bad_request: this request has used its budget of 80 directory listings; list a subdirectory or fewer levels, or send further calls in a new request";
    expect(texts.slice(1)).toEqual([spent, spent]);
  });

  it("answers a batch of 20 read_file calls until the request's 16 Mi characters of answers are spent, then refuses", async () => {
    const big = "r".repeat(1.5 * 1024 * 1024);
    await fs.write("hostile/big.txt", big);
    const { json } = await postMcp(
      fs.url,
      Array.from({ length: 20 }, (_, id) => toolCall(id, "read_file", { path: "hostile/big.txt" })),
    );
    const texts = batchTexts(json);
    // Each answer holds the text twice (content and structuredContent): five fit in 16 Mi characters.
    for (const text of texts.slice(0, 5)) expect(text === big).toBe(true);
    // The next five were read and refused; then the 16 Mi characters read were spent too.
    for (const text of texts.slice(5, 10)) expect(text).toBe(ANSWER_SPENT);
    for (const text of texts.slice(10)) {
      expect(text).toBe(
        "!bad_request: this request has used its budget of 16777216 characters read; send further calls in a new request",
      );
    }
  });

  it("answers a batch of read_media_file calls until the request's 16 Mi characters of answers are spent, then refuses", async () => {
    const photo = new Uint8Array(8 * 1024 * 1024).map((_, i) => i % 251);
    await writeFile(path.join(vault.diskRoot, "photo.png"), photo);
    const { status, json } = await postMcp(vault.diskCapUrl, [
      toolCall(1, "read_media_file", { path: "photo.png" }),
      toolCall(2, "read_media_file", { path: "photo.png" }),
      toolCall(3, "read_media_file", { path: "photo.png" }),
    ]);
    expect(status).toBe(200);
    const [first, ...rest] = (json as { id: number; result: Record<string, unknown> }[]).toSorted(
      (a, b) => a.id - b.id,
    );
    // 8 MiB as base64 is 11,184,812 characters, sent once: a second does not fit.
    const content = first!.result.content as { type: string; data: string }[];
    expect(content.map((c) => [c.type, c.data.length])).toEqual([["image", 11_184_812]]);
    expect(content[0]!.data === Buffer.from(photo).toString("base64")).toBe(true);
    expect(first!.result.structuredContent).toBeUndefined();
    expect(batchTexts(rest)).toEqual([ANSWER_SPENT, ANSWER_SPENT]);
  });

  it("answers a batch of read_multiple_files calls while the request's 200 storage calls cover them, then refuses", async () => {
    await mkdir(path.join(vault.diskRoot, "many"));
    for (let i = 0; i < 100; i++) await writeFile(path.join(vault.diskRoot, "many", `f${i}.md`), `file ${i}`);
    const paths = Array.from({ length: 100 }, (_, i) => `many/f${i}.md`);
    const { status, json } = await postMcp(
      vault.diskCapUrl,
      Array.from({ length: 20 }, (_, id) => toolCall(id, "read_multiple_files", { paths })),
    );
    expect(status).toBe(200);
    const texts = batchTexts(json);
    const whole = paths.map((p, i) => `${p}:\nfile ${i}\n`).join("\n---\n");
    // Two calls of 100 reads fit in 200; the third would not, so it reads nothing and is refused whole.
    expect(texts.slice(0, 2)).toEqual([whole, whole]);
    for (const text of texts.slice(2)) {
      expect(text).toBe(
        "!bad_request: this request has used its budget of 200 storage calls (reads, stats, writes, listings); send further calls in a new request",
      );
    }
    // 100, 80 and 20 reads make the 200; one more read does not fit.
    const next = await postMcp(
      vault.diskCapUrl,
      [100, 80, 20, 1].map((n, id) => toolCall(id, "read_multiple_files", { paths: paths.slice(0, n) })),
    );
    const nextTexts = batchTexts(next.json);
    expect(nextTexts.slice(0, 3).map((t) => t.split("\n---\n").length)).toEqual([100, 80, 20]);
    expect(nextTexts[3]).toMatch(/^!bad_request: this request has used its budget of 200 storage calls/);
  });
});

describe("one server per set of rights, shared by every request", () => {
  it("calls on two caps with the same rights, 16 in flight each and the same JSON-RPC ids, each reach their own cap", async () => {
    for (const side of ["a", "b"]) {
      for (let i = 0; i < 8; i++) await fs.write(`shared/${side}/f${i}.md`, `${side}${i}`);
    }
    const caps = await Promise.all(["a", "b"].map((side) => fs.subdir({ path: `shared/${side}`, rights: ["read"] })));
    const clients = await Promise.all(caps.map((cap) => connect(cap.url)));
    // Each lane alternates the official client's calls with batches, whose later calls run after other requests' I/O.
    const lane = async (side: number, k: number) => {
      const name = "ab"[side]!;
      for (let n = 0; n < 4; n++) {
        const f = (m: number) => (k + n + m) % 8;
        if ((await ok(clients[side]!, "read_file", { path: `f${f(0)}.md` })) !== `${name}${f(0)}`) return false;
        const batch = [1, 2, 3].map((id) => toolCall(id, "read_file", { path: `f${f(id)}.md` }));
        const texts = batchTexts((await postMcp(caps[side]!.url, batch)).json);
        if (texts.join() !== [1, 2, 3].map((m) => `${name}${f(m)}`).join()) return false;
      }
      return true;
    };
    const lanes = await Promise.all(Array.from({ length: 32 }, (_, k) => lane(k % 2, k)));
    expect(lanes.every(Boolean)).toBe(true);
  });

  it("answers a batch with the ids its sender chose, in order, each call on this request's cap", async () => {
    await fs.write("shared/batch.md", "batch");
    const { status, json } = await postMcp(fs.url, [
      toolCall(7, "read_file", { path: "shared/batch.md" }),
      toolCall(3, "read_file", { path: "shared/a/f1.md" }),
    ]);
    expect(status).toBe(200);
    expect((json as { id: number }[]).map((a) => a.id)).toEqual([7, 3]);
    expect(batchTexts(json)).toEqual(["a1", "batch"]);
  });
});

describe("Streamable HTTP answers, as the SDK's transport gave them", () => {
  const list = { jsonrpc: "2.0", id: 1, method: "tools/list" };
  const init = {
    jsonrpc: "2.0",
    id: 2,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
  };
  const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
  it.each<[string, Record<string, string>, unknown, number, unknown]>([
    [
      "no SSE in Accept",
      { ...headers, accept: "application/json" },
      list,
      406,
      {
        code: -32000,
        message: "Not Acceptable: Client must accept both application/json and text/event-stream",
      },
    ],
    [
      "not JSON",
      { ...headers, "content-type": "text/plain" },
      list,
      415,
      {
        code: -32000,
        message: "Unsupported Media Type: Content-Type must be application/json",
      },
    ],
    [
      "an unknown protocol version",
      { ...headers, "mcp-protocol-version": "1999-01-01" },
      list,
      400,
      {
        code: -32000,
        message: expect.stringMatching(/^Bad Request: Unsupported protocol version: 1999-01-01 \(supported versions: /),
      },
    ],
    ["not JSON-RPC", headers, { hello: 1 }, 400, { code: -32700, message: "Parse error: Invalid JSON-RPC message" }],
    [
      "initialize in a batch",
      headers,
      [init, list],
      400,
      {
        code: -32600,
        message: "Invalid Request: Only one initialization request is allowed",
      },
    ],
  ])("%s", async (_, headers, body, status, error) => {
    const response = await fetch(`${fs.url}/mcp`, { method: "POST", headers, body: JSON.stringify(body) });
    expect(response.status).toBe(status);
    expect(await response.json()).toEqual({ jsonrpc: "2.0", id: null, error });
  });

  it("notifications alone are accepted with 202 and no body", async () => {
    const response = await fetch(`${fs.url}/mcp`, {
      method: "POST",
      headers,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    expect(response.status).toBe(202);
    expect(await response.text()).toBe("");
  });

  it("initialize negotiates the version it was asked for", async () => {
    const { status, json } = await postMcp(fs.url, init);
    expect(status).toBe(200);
    expect(json).toMatchObject({ jsonrpc: "2.0", id: 2, result: { protocolVersion: "2025-06-18" } });
  });
});

describe("the endpoint", () => {
  it("answers unknown, malformed and revoked tokens with the same 404 as every other route", async () => {
    const unknown = `${vault.url}/object/${"b".repeat(48)}`;
    const reference = await fetch(unknown);
    expect(reference.status).toBe(404);
    const referenceBody = await reference.text();
    const revoked = await fs.subdir({ path: "notes" });
    await revoked.revoke();
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    for (const capUrl of [unknown, `${vault.url}/object/nope`, revoked.url]) {
      for (const method of ["POST", "GET", "DELETE"]) {
        const response = await fetch(`${capUrl}/mcp`, {
          method,
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          ...(method === "POST" ? { body: JSON.stringify(init) } : {}),
        });
        expect(response.status, `${method} ${capUrl}`).toBe(404);
        expect(await response.text()).toBe(referenceBody);
      }
    }
    await expect(connect(revoked.url)).rejects.toThrow();
  });

  it("is stateless: GET (no server stream) is 405", async () => {
    const response = await fetch(`${fs.url}/mcp`, { headers: { accept: "text/event-stream" } });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("POST");
  });

  it("a cap revoked between calls stops answering at once", async () => {
    const sub = await fs.subdir({ path: "notes" });
    const client = await connect(sub.url);
    expect(await ok(client, "read_file", { path: "a.md" })).toBe("line1\nLINE2\nline3\n");
    await sub.revoke();
    await expect(client.callTool({ name: "read_file", arguments: { path: "a.md" } })).rejects.toThrow(/no_such_cap/);
  });

  it("a revoked cap whose rights the endpoint has seen answers every request with the same 404", async () => {
    const referenceBody = await (await fetch(`${vault.url}/object/${"b".repeat(48)}`)).text();
    await fs.write("seen/a.md", "seen");
    const sub = await fs.subdir({ path: "seen", rights: ["read", "list"] });
    const client = await connect(sub.url);
    expect(await ok(client, "read_file", { path: "a.md" })).toBe("seen");
    await sub.revoke();
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const bodies: [string, Record<string, string>][] = [
      [JSON.stringify(toolCall(1, "read_file", { path: "a.md" })), headers],
      [JSON.stringify(toolCall(1, "read_file", { path: 7 })), headers],
      [JSON.stringify(toolCall(1, "delete_file", { path: "a.md" })), headers],
      // Tools that answer without failing for a missing file, or read no file at all, still find the cap dead.
      [JSON.stringify(toolCall(1, "read_multiple_files", { paths: ["a.md"] })), headers],
      [JSON.stringify(toolCall(1, "list_allowed_directories", {})), headers],
      [JSON.stringify(toolCall(1, "search_files", { pattern: "*" })), headers],
      [JSON.stringify([toolCall(1, "list_directory", {}), toolCall(2, "read_file", { path: "../x" })]), headers],
      [JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), headers],
      [JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), headers],
      [JSON.stringify([]), headers],
      [JSON.stringify({ hello: 1 }), headers],
      ["{not json", headers],
      [JSON.stringify(Array.from({ length: 21 }, (_, id) => toolCall(id, "read_file", { path: "a.md" }))), headers],
      [JSON.stringify(toolCall(1, "read_file", { path: "a.md" })), { ...headers, accept: "application/json" }],
    ];
    for (const [body, h] of bodies) {
      const response = await fetch(`${sub.url}/mcp`, { method: "POST", headers: h, body });
      expect(response.status, body).toBe(404);
      expect(await response.text(), body).toBe(referenceBody);
    }
  });

  it("no response, description or instruction names the root prefix or a host path", () => {
    expect(seen.length).toBeGreaterThan(50);
    for (const text of seen) {
      expect(text).not.toContain("secret-prefix-xyz");
      expect(text).not.toContain(vault.state);
      expect(text).not.toContain(vault.diskRoot);
    }
  });
});
