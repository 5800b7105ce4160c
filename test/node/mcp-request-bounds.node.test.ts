/**
 * The cap-scoped MCP endpoint's bounds on one request's work, through raw
 * JSON-RPC batches against the running launcher: edits, listings, walks,
 * answer characters and storage calls, each refused once spent.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { batchTexts, mcpClients, toolCall } from "./mcp-client.ts";
import { expectNoPrefixOrHostPath, mcpEndpointVault } from "./mcp-endpoint-fixture.ts";
import type { SharedVault } from "./shared-vault.ts";

let vault: SharedVault;
let fs: FsCap;
/** Everything any MCP response carried (`seen`) is checked at the end for the root prefix. */
const { seen, connect, call, ok, closeAll, post: postMcp } = mcpClients();

beforeAll(async () => {
  ({ vault, fs } = await mcpEndpointVault("mcp-request-bounds"));
});

afterAll(async () => {
  await closeAll();
});

const ANSWER_SPENT =
  "!bad_request: this request's answers have used their budget of 16777216 characters; send further calls in a new request";

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

describe("secrecy", () => {
  it("no response, description or instruction names the root prefix or a host path", () => {
    expectNoPrefixOrHostPath(seen, vault, 10);
  });
});
