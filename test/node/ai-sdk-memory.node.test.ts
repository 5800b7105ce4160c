/**
 * The AI SDK's Anthropic memory tool (`anthropic.tools.memory_20250818`)
 * backed by a cap, driven by the real `generateText` loop: a scripted model
 * (the AI SDK's own `MockLanguageModelV4`, or the real Anthropic provider over
 * a scripted Messages API) calls `memory` step by step, and each result the
 * model is sent next is checked, as is what landed in the vault, read back with
 * plain GETs rather than through the adapter. Refusals (rights, revocation,
 * escapes, quotas, sizes) reach the model as error results and change nothing.
 */
import { createAnthropic } from "@ai-sdk/anthropic";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { beforeAll, describe, expect, it } from "vitest";
import { type CapMemoryTool, capMemoryTool } from "../../clients/ai-sdk/index.ts";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

type MemoryInput = Record<string, unknown> & { command: string };

let vault: SharedVault;
/** Every cap URL any test handed the tool, and every text the model was sent: checked for tokens at the end. */
const capUrls: string[] = [];
const sentToModel: string[] = [];

beforeAll(async () => {
  vault = await sharedVault("ai-sdk-memory");
});

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A model that makes one memory call per step, in order, then says "done". */
function scriptedModel(calls: MemoryInput[]) {
  return new MockLanguageModelV4({
    doGenerate: [
      ...calls.map((input, i) => ({
        content: [
          { type: "tool-call" as const, toolCallId: `call-${i}`, toolName: "memory", input: JSON.stringify(input) },
        ],
        finishReason: { unified: "tool-calls" as const, raw: "tool_use" },
        usage,
        warnings: [],
      })),
      {
        content: [{ type: "text" as const, text: "done" }],
        finishReason: { unified: "stop" as const, raw: "end_turn" },
        usage,
        warnings: [],
      },
    ],
  });
}

interface Received {
  type: string;
  value: string;
}

/**
 * Runs `calls` through `generateText` with the memory tool over `cap`, and
 * answers, per call, the output as the model received it in its next prompt
 * (`text`, or `error-text` for a refusal), checked against the step's result.
 */
async function converse(cap: string, calls: MemoryInput[]): Promise<Received[]> {
  capUrls.push(cap);
  const model = scriptedModel(calls);
  const result = await generateText({
    model,
    tools: { memory: capMemoryTool(cap) },
    prompt: "Keep notes.",
    stopWhen: stepCountIs(calls.length + 1),
  });
  expect(result.text).toBe("done");
  expect(result.steps).toHaveLength(calls.length + 1);
  expect(model.doGenerateCalls[0]!.tools).toEqual([
    { type: "provider", id: "anthropic.memory_20250818", name: "memory", args: {} },
  ]);
  const received: Received[] = [];
  for (const [i, input] of calls.entries()) {
    const [toolResult, ...more] = result.steps[i]!.toolResults;
    expect(more).toEqual([]);
    expect(toolResult).toMatchObject({ type: "tool-result", toolCallId: `call-${i}`, toolName: "memory", input });
    const prompt = model.doGenerateCalls[i + 1]!.prompt;
    sentToModel.push(JSON.stringify(prompt));
    const last = prompt[prompt.length - 1]!;
    expect(last.role).toBe("tool");
    const part = (last.content as { type: string; toolCallId?: string; output?: Received }[])[0]!;
    expect(part).toMatchObject({ type: "tool-result", toolCallId: `call-${i}`, toolName: "memory" });
    const output = part.output!;
    expect(output.value).toBe(toolResult!.output);
    expect(output.type).toBe(output.value.startsWith("Error: ") ? "error-text" : "text");
    received.push({ type: output.type, value: output.value });
  }
  return received;
}

const text = (value: string): Received => ({ type: "text", value });
const refused = (value: string): Received => ({ type: "error-text", value });

/** The file at `path` under `cap`, by a plain GET: its text, or null when the vault answers 404. */
async function landed(cap: string, path: string): Promise<string | null> {
  const response = await fetch(`${cap}/file?path=${encodeURIComponent(path)}`);
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  expect(response.status).toBe(200);
  return response.text();
}

const VIEW_ROOT_HEADER =
  "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:";

describe.each([
  ["R2", () => vault.rootCapUrl],
  ["disk", () => vault.diskCapUrl],
])("the memory tool through generateText, on %s", (_backend, capUrl) => {
  it("views, creates, edits, renames and deletes, and the vault holds what the model was told", async () => {
    const cap = capUrl();
    const received = await converse(cap, [
      { command: "view", path: "/memories" },
      { command: "create", path: "/memories/notes/prefs.md", file_text: "drinks: coffee\nfont: serif\n" },
      { command: "create", path: "/memories/scratch.md", file_text: "temporary\n" },
      { command: "str_replace", path: "/memories/notes/prefs.md", old_str: "coffee", new_str: "tea" },
      { command: "insert", path: "/memories/notes/prefs.md", insert_line: 0, insert_text: "# prefs" },
      { command: "view", path: "/memories/notes/prefs.md" },
      { command: "rename", old_path: "/memories/notes/prefs.md", new_path: "/memories/user.md" },
      { command: "delete", path: "/memories/scratch.md" },
      { command: "view", path: "/memories" },
    ]);
    expect(received).toEqual([
      text(`${VIEW_ROOT_HEADER}\n0B\t/memories`),
      text("File created successfully at: /memories/notes/prefs.md"),
      text("File created successfully at: /memories/scratch.md"),
      text(
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n" +
          "     1\tdrinks: tea\n     2\tfont: serif\n     3\t",
      ),
      text("The file /memories/notes/prefs.md has been edited."),
      text(
        "Here's the content of /memories/notes/prefs.md with line numbers:\n" +
          "     1\t# prefs\n     2\tdrinks: tea\n     3\tfont: serif\n     4\t",
      ),
      text("Successfully renamed /memories/notes/prefs.md to /memories/user.md"),
      text("Successfully deleted /memories/scratch.md"),
      // As on a file system, moving a folder's last file out leaves the folder.
      text(`${VIEW_ROOT_HEADER}\n32B\t/memories\n0B\t/memories/notes/\n32B\t/memories/user.md`),
    ]);
    expect(await landed(cap, "user.md")).toBe("# prefs\ndrinks: tea\nfont: serif\n");
    expect(await landed(cap, "notes/prefs.md")).toBeNull();
    expect(await landed(cap, "scratch.md")).toBeNull();
    // A refusal in the middle of a run is one error result; the run goes on.
    const again = await converse(cap, [
      { command: "create", path: "/memories/user.md", file_text: "overwritten?\n" },
      { command: "view", path: "/memories/missing.md" },
      { command: "delete", path: "/memories/user.md" },
    ]);
    expect(again).toEqual([
      refused("Error: File /memories/user.md already exists"),
      refused("Error: The path /memories/missing.md does not exist. Please provide a valid path."),
      text("Successfully deleted /memories/user.md"),
    ]);
    expect(await landed(cap, "user.md")).toBeNull();
  });

  it("a read-only child cap views, and its create is an error result that writes nothing", async () => {
    const root = new FsCap(capUrl());
    await root.write("ro/seen.md", "visible\n");
    const reader = await root.subdir({ path: "ro", rights: ["read", "list"] });
    const received = await converse(reader.url, [
      { command: "view", path: "/memories/seen.md" },
      { command: "create", path: "/memories/new.md", file_text: "should not land\n" },
      { command: "str_replace", path: "/memories/seen.md", old_str: "visible", new_str: "changed" },
      { command: "delete", path: "/memories/seen.md" },
    ]);
    expect(received[0]).toEqual(
      text("Here's the content of /memories/seen.md with line numbers:\n     1\tvisible\n     2\t"),
    );
    for (const result of received.slice(1)) {
      expect(result.type).toBe("error-text");
      expect(result.value).toMatch(/^Error: forbidden: /);
    }
    expect(await landed(root.url, "ro/new.md")).toBeNull();
    expect(await landed(root.url, "ro/seen.md")).toBe("visible\n");
  });

  it("a revoked cap answers every command with an error result", async () => {
    const root = new FsCap(capUrl());
    const child = await root.subdir({ path: "revoked", rights: ["read", "write", "delete", "list"] });
    await child.write("kept.md", "kept\n");
    await child.revoke();
    const received = await converse(child.url, [
      { command: "view", path: "/memories" },
      { command: "create", path: "/memories/after.md", file_text: "after\n" },
    ]);
    expect(received).toEqual([
      refused("Error: no_such_cap: no such capability (/memories)"),
      refused("Error: no_such_cap: no such capability (/memories/after.md)"),
    ]);
    expect(await landed(root.url, "revoked/after.md")).toBeNull();
    expect(await landed(root.url, "revoked/kept.md")).toBe("kept\n");
  });

  it("refuses paths that leave /memories, and nothing lands beside the cap's folder", async () => {
    const root = new FsCap(capUrl());
    const inner = await root.subdir({ path: "inner", rights: ["read", "write", "delete", "list"] });
    const received = await converse(inner.url, [
      { command: "create", path: "/memories/../escaped.md", file_text: "out\n" },
      { command: "create", path: "/memoriesX/escaped.md", file_text: "out\n" },
      { command: "view", path: "/etc/passwd" },
      { command: "rename", old_path: "/memories", new_path: "/memories/x" },
    ]);
    for (const result of received) expect(result.type, result.value).toBe("error-text");
    expect(received[0]!.value).toBe("Error: path_escapes: path escapes (/memories/../escaped.md)");
    expect(await landed(root.url, "escaped.md")).toBeNull();
    expect(await landed(root.url, "inner/escaped.md")).toBeNull();
  });

  it("a quota too small and a file too large to view are error results", async () => {
    const root = new FsCap(capUrl());
    const small = await root.subdir({ path: "quota", rights: ["read", "write", "delete", "list"], maxBytes: 16 });
    await root.write("big/huge.md", "x".repeat(2 * 1024 * 1024 + 1));
    const big = await root.subdir({ path: "big", rights: ["read", "list"] });
    const [overQuota] = await converse(small.url, [
      { command: "create", path: "/memories/long.md", file_text: "far more than sixteen bytes\n" },
    ]);
    expect(overQuota!.type).toBe("error-text");
    expect(overQuota!.value).toMatch(/^Error: quota_exceeded: /);
    expect(await landed(root.url, "quota/long.md")).toBeNull();
    const [tooLarge] = await converse(big.url, [{ command: "view", path: "/memories/huge.md" }]);
    expect(tooLarge!.type).toBe("error-text");
    expect(tooLarge!.value).toMatch(/^Error: too_large: /);
  });
});

describe("the memory tool through the real Anthropic provider", () => {
  it("is sent as memory_20250818, and a refusal goes back as a tool_result with is_error", async () => {
    const root = new FsCap(vault.rootCapUrl);
    const reader = await root.subdir({ path: "wire", rights: ["read", "list"] });
    capUrls.push(reader.url);
    const script = [
      { command: "view", path: "/memories" },
      { command: "create", path: "/memories/denied.md", file_text: "no\n" },
    ];
    const bodies: { tools: unknown; messages: { role: string; content: unknown }[] }[] = [];
    // The Messages API, scripted: one tool_use per reply, then a closing text.
    const messagesApi = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const body = JSON.parse(String(init?.body));
      bodies.push(body);
      const step = bodies.length - 1;
      const input = script[step];
      const content = input
        ? [{ type: "tool_use", id: `toolu_${step}`, name: "memory", input }]
        : [{ type: "text", text: "done" }];
      return Response.json({
        id: `msg_${step}`,
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content,
        stop_reason: input ? "tool_use" : "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      });
    };
    const anthropic = createAnthropic({ apiKey: "test", fetch: messagesApi as typeof fetch });
    const result = await generateText({
      model: anthropic("claude-sonnet-4-5"),
      // The key must be `memory`: the provider (4.0.112) does not map Claude's `memory` calls back to another key.
      tools: { memory: capMemoryTool(reader.url) },
      prompt: "Keep notes.",
      stopWhen: stepCountIs(script.length + 1),
    });
    expect(result.text).toBe("done");
    expect(result.steps[0]!.toolResults[0]).toMatchObject({ toolName: "memory", input: script[0] });
    expect(bodies).toHaveLength(script.length + 1);
    expect(bodies[0]!.tools).toEqual([{ type: "memory_20250818", name: "memory" }]);
    const toolResults = bodies.slice(1).map((b) => {
      sentToModel.push(JSON.stringify(b));
      const last = b.messages[b.messages.length - 1]!;
      expect(last.role).toBe("user");
      return (last.content as Record<string, unknown>[]).find((c) => c.type === "tool_result");
    });
    expect(toolResults[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_0",
      content: `${VIEW_ROOT_HEADER}\n0B\t/memories`,
    });
    expect(toolResults[0]!.is_error).toBeUndefined();
    expect(toolResults[1]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_1", is_error: true });
    expect(String(toolResults[1]!.content)).toMatch(/^Error: forbidden: /);
    expect(await landed(root.url, "wire/denied.md")).toBeNull();
  });
});

describe("the tool's execute, called directly", () => {
  /** One command through the tool's own `execute`, as the AI SDK calls it. */
  const execute = async (tool: CapMemoryTool, input: { command: "view"; path: string }) => {
    const output = await tool.execute!(input, { toolCallId: "direct", messages: [], context: {} });
    if (typeof output !== "string") throw new Error("execute answers one string, not a stream");
    sentToModel.push(output);
    return output;
  };

  it("an unreachable vault is an error text without the cap's token", async () => {
    const url = "http://127.0.0.1:9/object/secret-token-for-the-unreachable-case";
    capUrls.push(url);
    const unreachable = async (input: string) => {
      throw new Error(`connect ECONNREFUSED while asking ${input}`);
    };
    const tool = capMemoryTool(url, { fetch: unreachable });
    const output = await execute(tool, { command: "view", path: "/memories" });
    expect(output).toMatch(/^Error: unavailable: /);
    expect(output).not.toContain("secret-token");
  });

  it("a failure that is no refusal is a fixed error text, and onError hears of it", async () => {
    const url = "http://127.0.0.1:9/object/secret-token-for-the-broken-case";
    capUrls.push(url);
    const seen: unknown[] = [];
    // Not a Response at all: the SDK fails on it with a TypeError, no CapError.
    const broken = async () => ({ status: 200, ok: true }) as unknown as Response;
    const tool = capMemoryTool(url, { fetch: broken, onError: (error) => seen.push(error) });
    const output = await execute(tool, { command: "view", path: "/memories/a.md" });
    expect(output).toBe("Error: unavailable: the memory command failed; nothing is known of its effect");
    expect(seen).toHaveLength(1);
    expect(await tool.toModelOutput!({ toolCallId: "direct", input: { command: "view", path: "/" }, output })).toEqual({
      type: "error-text",
      value: output,
    });
  });
});

describe("what the model was sent", () => {
  it("names no cap token, no root and no host path", () => {
    expect(sentToModel.length).toBeGreaterThan(10);
    const tokens = capUrls.map((url) => url.slice(url.lastIndexOf("/") + 1));
    for (const token of tokens) expect(token.length).toBeGreaterThan(20);
    for (const sent of sentToModel) {
      for (const token of tokens) expect(sent).not.toContain(token);
      expect(sent).not.toContain(vault.diskRoot);
      expect(sent).not.toContain(vault.state);
      expect(sent).not.toContain("ai-sdk-memory-");
    }
  });
});
