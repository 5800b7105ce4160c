/**
 * The MCP endpoint's version tools through the official MCP client SDK
 * against the running launcher: list_versions shows a file's history newest
 * first, restore_version brings a deleted file back, a read-only cap lists
 * but cannot restore, and a child cap never reaches versions outside its
 * subtree.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { mcpClients, postMcp, toolCall } from "./mcp-client.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";
import { mintRoot } from "./test-vault.ts";

const PREFIX = "versions-prefix-q7/";
let vault: SharedVault;
let fs: FsCap;
const mcp = mcpClients();
const { connect } = mcp;

beforeAll(async () => {
  vault = await sharedVault("mcp-versions");
  fs = new FsCap((await mintRoot(vault, { backend: "r2", prefix: PREFIX, label: "mcp-versions" })).url);
});

afterAll(async () => {
  await mcp.closeAll();
});

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = await mcp.call(client, name, args);
  expect(result.text).not.toContain(PREFIX);
  return result;
}

/** The version lines of a list_versions answer, split into fields. */
const versionLines = (text: string) =>
  text
    .split("\n")
    .filter((line) => /^\d+ /.test(line))
    .map((line) => line.split(" "));

describe("list_versions and restore_version", () => {
  it("are offered by rights: list_versions with read, restore_version with read and write", async () => {
    const names = async (rights: ("read" | "write" | "list")[]) =>
      (await (await connect((await fs.subdir({ path: "", rights })).url)).listTools()).tools.map((t) => t.name);
    expect(await names(["read", "list"])).toContain("list_versions");
    expect(await names(["read", "list"])).not.toContain("restore_version");
    expect(await names(["read", "write"])).toContain("restore_version");
    expect(await names(["write"])).not.toContain("restore_version");
    expect(await names(["write"])).not.toContain("list_versions");
  });

  it("write, overwrite, delete: three versions newest first; restore brings the deleted file back", async () => {
    const client = await connect(fs.url);
    expect((await call(client, "write_file", { path: "notes/plan.md", content: "v1" })).isError).toBe(false);
    expect((await call(client, "write_file", { path: "notes/plan.md", content: "v22" })).isError).toBe(false);
    expect((await call(client, "delete_file", { path: "notes/plan.md" })).isError).toBe(false);

    const listed = await call(client, "list_versions", { path: "/notes/plan.md" });
    expect(listed.isError, listed.text).toBe(false);
    expect(listed.structured).toBe(listed.text);
    const lines = versionLines(listed.text);
    expect(lines.map((l) => l[1])).toEqual(["deleted", "modified", "created"]);
    const ids = lines.map((l) => Number(l[0]));
    expect(ids[0]! > ids[1]! && ids[1]! > ids[2]!).toBe(true);
    const http = await fs.versions("notes/plan.md");
    expect(lines.map((l) => l[0])).toEqual(http.versions.map((v) => v.id));
    for (const [i, v] of http.versions.entries()) {
      expect(listed.text.split("\n")[i + 1]).toBe(
        `${v.id} ${v.operation} ${v.at} ${v.size} bytes sha256 ${v.sha256!.slice(0, 12)} by ${v.actor}`,
      );
    }

    // The deleted version points at the bytes it took away: "v22".
    const restored = await call(client, "restore_version", { versionId: lines[0]![0] });
    expect(restored.isError, restored.text).toBe(false);
    expect(restored.text).toMatch(
      /^Restored version \d+ to notes\/plan\.md as a new version: 3 bytes, etag "[0-9a-f]{32}"/,
    );
    expect(await fs.readText("notes/plan.md")).toBe("v22");
    const after = versionLines((await call(client, "list_versions", { path: "notes/plan.md" })).text);
    expect(after.map((l) => l[1])).toEqual(["created", "deleted", "modified", "created"]);
  });

  it("pages with limit and cursor, and a redacted version says so", async () => {
    for (const text of ["a", "bb", "ccc"]) await fs.write("paged.md", text);
    const client = await connect(fs.url);
    const first = await call(client, "list_versions", { path: "paged.md", limit: 2 });
    expect(versionLines(first.text)).toHaveLength(2);
    const cursor = /cursor "(\d+)"/.exec(first.text)?.[1];
    expect(cursor).toBeDefined();
    const rest = await call(client, "list_versions", { path: "paged.md", limit: 2, cursor });
    expect(versionLines(rest.text).map((l) => l[1])).toEqual(["created"]);
    expect(rest.text).not.toContain("cursor");
    await fs.redact(versionLines(rest.text)[0]![0]!);
    const redacted = await call(client, "list_versions", { path: "paged.md", cursor });
    expect(redacted.text).toMatch(/ created \S+ 1 bytes sha256 - by \S+ redacted$/m);
    expect((await call(client, "restore_version", { versionId: versionLines(rest.text)[0]![0] })).isError).toBe(true);
    expect(await fs.readText("paged.md")).toBe("ccc");
  });

  it("a read-only cap lists versions but cannot restore one", async () => {
    await fs.write("guarded.md", "one");
    await fs.write("guarded.md", "two");
    const readOnly = await connect((await fs.subdir({ path: "", rights: ["read", "list"], history: "all" })).url);
    const lines = versionLines((await call(readOnly, "list_versions", { path: "guarded.md" })).text);
    expect(lines.map((l) => l[1])).toEqual(["modified", "created"]);
    const refused = await call(readOnly, "restore_version", { versionId: lines[1]![0] });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain("restore_version");
    expect(await fs.readText("guarded.md")).toBe("two");
  });

  it("a cap that may restore is refused by the vault for a version it cannot name", async () => {
    const writeOnly = await connect((await fs.subdir({ path: "", rights: ["read", "write"] })).url);
    for (const versionId of ["999999999", "abc", "-1", ""]) {
      expect(await call(writeOnly, "restore_version", { versionId })).toMatchObject({
        isError: true,
        text: "not_found: no such version",
      });
    }
  });

  it("a child cap never sees versions outside its subtree", async () => {
    await fs.write("outside.md", "secret one");
    await fs.write("outside.md", "secret two");
    await fs.write("team/inside.md", "ours");
    const outside = (await fs.versions("outside.md")).versions.map((v) => v.id);
    // history: "all", so only its scope keeps the outside versions from it.
    const child = await connect((await fs.subdir({ path: "team", history: "all" })).url);
    const own = versionLines((await call(child, "list_versions", { path: "inside.md" })).text);
    expect(own.map((l) => l[1])).toEqual(["created"]);
    expect(await call(child, "list_versions", { path: "../outside.md" })).toMatchObject({
      isError: true,
      text: expect.stringMatching(/^path_escapes: /),
    });
    expect((await call(child, "list_versions", { path: "outside.md" })).text).toBe("No versions of outside.md");
    for (const versionId of outside) {
      expect(await call(child, "restore_version", { versionId })).toMatchObject({
        isError: true,
        text: "not_found: no such version",
      });
    }
    expect(await fs.readText("outside.md")).toBe("secret two");
    await expect(fs.stat("team/outside.md")).rejects.toMatchObject({ code: "not_found" });
  });

  it("a cap minted by create_subdir_cap sees the history before its mint only with history: all", async () => {
    await fs.write("floor/secret.md", "hunter2");
    await fs.delete("floor/secret.md");
    const [, created] = (await fs.versions("floor/secret.md")).versions.map((v) => v.id);
    const parent = await connect(fs.url);
    const mint = async (args: Record<string, unknown>) =>
      connect(
        (JSON.parse((await call(parent, "create_subdir_cap", { path: "floor", ...args })).text) as { url: string }).url,
      );
    const floored = await mint({});
    expect((await call(floored, "list_versions", { path: "secret.md" })).text).toBe("No versions of secret.md");
    expect(await call(floored, "restore_version", { versionId: created! })).toMatchObject({
      isError: true,
      text: "not_found: no such version",
    });
    const everything = await mint({ history: "all" });
    const lines = versionLines((await call(everything, "list_versions", { path: "secret.md" })).text);
    expect(lines.map((l) => l[1])).toEqual(["deleted", "created"]);
  });

  it("a version listing counts against the request's listing budget", async () => {
    // Straight into the disk root's folder: 600 uploads would take longer than the test.
    await mkdir(path.join(vault.diskRoot, "wide"));
    for (let i = 0; i < 600; i++) await writeFile(path.join(vault.diskRoot, "wide", `f${i}.md`), "x");
    const disk = new FsCap(vault.diskCapUrl);
    await disk.write("kept.md", "one");
    const post = async (body: unknown) => {
      const response = await postMcp(vault.diskCapUrl, body);
      type Answer = { id: number; result: { content: { text: string }[] } };
      // A batch of one is answered with one message, not a list.
      const answers = [(await response.json()) as Answer | Answer[]].flat();
      return answers.find((a) => a.id === 99)!.result.content[0]!.text;
    };
    const trees = Array.from({ length: 11 }, (_, id) => toolCall(id, "directory_tree", { path: "wide" }));
    // Eleven trees of 600 entries spend the request's 6,000 listed entries: the history is refused, not listed.
    expect(await post([...trees, toolCall(99, "list_versions", { path: "kept.md" })])).toBe(
      "bad_request: this request has used its budget of 6000 listed entries; send further calls in a new request",
    );
    expect(await post([toolCall(99, "list_versions", { path: "kept.md" })])).toMatch(/^Versions of kept\.md/);
  });
});
