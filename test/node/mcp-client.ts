/**
 * The MCP side of the node tests: the official SDK's client connected to a
 * cap's /mcp, with the tool-call helpers every MCP test needs, and a raw
 * JSON-RPC POST for what that client never sends (batches, bad framing).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect } from "vitest";

/** A tool's answer: its text parts joined by lines, whether it is a tool error, its structured content if any. */
export interface ToolText {
  text: string;
  isError: boolean;
  structured?: string;
}

export interface McpClients {
  /** Every text an answer carried (instructions, tool lists, tool texts), for checks that nothing leaks a root. */
  seen: string[];
  connect(capUrl: string, headers?: Record<string, string>): Promise<Client>;
  /** Closes with the rest a client made elsewhere (another SDK version's). */
  keep<T extends { close(): Promise<void> }>(client: T): T;
  toolNames(client: Client): Promise<string[]>;
  call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolText>;
  /** The text of a call that must not be a tool error. */
  ok(client: Client, name: string, args: Record<string, unknown>): Promise<string>;
  /** Closes every client made here (for afterAll, before the vault stops). */
  closeAll(): Promise<void>;
  /** One raw POST (the official client sends no batches), its answer's head kept in `seen`. */
  post(capUrl: string, body: unknown): Promise<{ status: number; json: unknown }>;
}

export function mcpClients(): McpClients {
  const seen: string[] = [];
  const open: { close(): Promise<void> }[] = [];
  const keep = <T extends { close(): Promise<void> }>(client: T): T => {
    open.push(client);
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown>): Promise<ToolText> => {
    const result = (await client.callTool({ name, arguments: args })) as {
      content: { type: string; text?: string }[];
      structuredContent?: { content?: string };
      isError?: boolean;
    };
    const text = result.content.map((c) => c.text ?? "").join("\n");
    seen.push(text);
    const answer: ToolText = { text, isError: result.isError === true };
    if (result.structuredContent?.content !== undefined) answer.structured = result.structuredContent.content;
    return answer;
  };
  return {
    seen,
    keep,
    async connect(capUrl, headers = {}) {
      const client = new Client({ name: "capvault-test", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${capUrl}/mcp`), { requestInit: { headers } }));
      keep(client);
      seen.push(client.getInstructions() ?? "");
      return client;
    },
    async toolNames(client) {
      const { tools } = await client.listTools();
      seen.push(JSON.stringify(tools));
      return tools.map((t) => t.name);
    },
    call,
    async ok(client, name, args) {
      const result = await call(client, name, args);
      expect(result.isError, result.text).toBe(false);
      return result.text;
    },
    async closeAll() {
      await Promise.allSettled(open.map((c) => c.close()));
    },
    async post(capUrl, body) {
      const response = await postMcp(capUrl, body);
      const text = await response.text();
      // Megabytes of a file read back hold no prefix; the head of the answer is checked like the rest.
      seen.push(text.slice(0, 100_000));
      return { status: response.status, json: JSON.parse(text) };
    },
  };
}

/** The text of each answer in a batch, by id, `!`-prefixed when it is a tool error. */
export function batchTexts(json: unknown): string[] {
  const answers = (json as { id: number; result: { content: { text: string }[]; isError?: boolean } }[]).toSorted(
    (a, b) => a.id - b.id,
  );
  return answers.map((a) => `${a.result.isError ? "!" : ""}${a.result.content[0]!.text}`);
}

/** A JSON-RPC tools/call message. */
export const toolCall = (id: number, name: string, args: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

/** One raw POST of `body` to a cap's /mcp; `headers` default to the 2025-06-18 protocol version. */
export function postMcp(
  capUrl: string,
  body: unknown,
  headers: Record<string, string> = { "mcp-protocol-version": "2025-06-18" },
): Promise<Response> {
  return fetch(`${capUrl}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
}
