/**
 * A real Think agent (`@cloudflare/think`, a Durable Object) whose workspace
 * is a cap, for test/workers-think/. Nothing about Think is replaced: its own
 * turn loop builds its own workspace tools from `this.workspace` and runs
 * them. Only the model is scripted (the AI SDK's own `MockLanguageModelV4`),
 * because no model is reachable from a test: each step of a turn answers with
 * the tool calls (or the text) the test wrote for it, and what the tools
 * returned is read back from the agent's stored messages.
 *
 * The token arrives per turn and is kept in memory only (never in the agent's
 * durable storage); the workspace opens the cap afresh for every call, as
 * docs/workers.md tells a real agent to.
 */
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { Think } from "@cloudflare/think";
import { MockLanguageModelV4 } from "ai/test";
import { CapWorkspace, type VaultCap } from "../../clients/agents-workspace/index.ts";

/** What one of Think's tool calls returned (or threw) in a turn. */
export interface ToolResult {
  tool: string;
  output?: unknown;
  error?: string;
}

/** What a test calls on the agent over Durable Object RPC (its stub's type, narrowed to this). */
export interface ThinkTurns {
  turn(
    token: string,
    script: ScriptStep[],
    beforeStep?: (step: number) => Promise<void>,
  ): Promise<{ status: string; results: ToolResult[] }>;
}

/** One model step: tool calls (name and input), or a closing text. */
export type ScriptStep = { tools: { name: string; input: Record<string, unknown> }[] } | { text: string };

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

function streamOf(step: ScriptStep | undefined): ReadableStream<LanguageModelV4StreamPart> {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
  if (step && "tools" in step) {
    for (const call of step.tools)
      parts.push({
        type: "tool-call",
        toolCallId: `call-${crypto.randomUUID()}`,
        toolName: call.name,
        input: JSON.stringify(call.input),
      });
    parts.push({ type: "finish", finishReason: { unified: "tool-calls", raw: undefined }, usage });
  } else {
    const text = step?.text ?? "done";
    parts.push(
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: text },
      { type: "text-end", id: "t" },
    );
    parts.push({ type: "finish", finishReason: { unified: "stop", raw: undefined }, usage });
  }
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

/** The agent's worker's bindings: the vault's CapVault entrypoint, over a service binding to another worker. */
interface AgentEnv {
  VAULT: { open(token: string): VaultCap };
}

export class ScriptedThinkAgent extends Think implements ThinkTurns {
  #token = "";
  #script: ScriptStep[] = [];
  #step = 0;
  #beforeStep: ((step: number) => Promise<void>) | undefined;

  override workspace = CapWorkspace.perCall(() => (this.env as unknown as AgentEnv).VAULT.open(this.#token), {
    mount: "/workspace",
  });

  override getModel() {
    return new MockLanguageModelV4({
      doStream: async () => {
        await this.#beforeStep?.(this.#step++);
        return { stream: streamOf(this.#script.shift()) };
      },
      doGenerate: async () => {
        throw new Error("the scripted model only streams");
      },
    });
  }

  /**
   * Runs one turn of Think's own loop with this script, and answers each tool
   * result of the turn, in order. `beforeStep`, a function of the test's
   * (a Workers RPC stub), is awaited before each model step: the owner acts
   * there, mid-turn, as it would while a real agent runs.
   */
  async turn(
    token: string,
    script: ScriptStep[],
    beforeStep?: (step: number) => Promise<void>,
  ): Promise<{ status: string; results: ToolResult[] }> {
    this.#token = token;
    this.#script = [...script];
    this.#step = 0;
    this.#beforeStep = beforeStep;
    const before = (await this.getMessages()).length;
    const result = await this.runTurn({ input: "go" });
    const messages = (await this.getMessages()).slice(before);
    const results = messages.flatMap((m) =>
      m.parts
        .filter((p) => p.type.startsWith("tool-"))
        .map((p) => {
          const part = p as { type: string; state?: string; output?: unknown; errorText?: string };
          const result: ToolResult = { tool: part.type.slice(5), output: part.output };
          if (part.errorText !== undefined) result.error = part.errorText;
          return result;
        }),
    );
    return { status: result.status, results };
  }
}
