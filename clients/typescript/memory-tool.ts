import { createMemoryHandler, type MemoryResult } from "../../memory-tool/memory-handler.ts";
import { FsCap } from "./fs-cap.ts";
import { fsCapTextFiles } from "./fs-cap-text-files.ts";
import type { ClientOptions } from "./types.ts";

export type { MemoryResult } from "../../memory-tool/memory-handler.ts";

/** The tool definition to pass in `tools` (with the `context-management-2025-06-27` beta). */
export const MEMORY_TOOL_DEFINITION = Object.freeze({ type: "memory_20250818", name: "memory" } as const);

/** A `tool_result` content block answering one memory `tool_use` block. */
export interface MemoryToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: string;
  is_error: boolean;
}

export interface MemoryTool {
  /** `{ type: "memory_20250818", name: "memory" }`, for the request's `tools`. */
  readonly definition: typeof MEMORY_TOOL_DEFINITION;
  /** Runs one tool input; resolves to the result string (errors start with `Error:`). */
  run(input: unknown): Promise<string>;
  /** Runs one tool input; the string plus `isError` and the wire `code`. */
  call(input: unknown): Promise<MemoryResult>;
  /** Answers a `tool_use` block with its `tool_result` block. */
  toolResult(block: { id: string; input: unknown }): Promise<MemoryToolResultBlock>;
}

/**
 * Claude's memory tool backed by a cap: `/memories` is the cap's root, so the
 * model can reach nothing else. Needs the read, write, delete and list rights.
 *
 * @example
 * const memory = createMemoryTool(process.env.CAPVAULT_CAP!);
 * const reply = await anthropic.beta.messages.create({ model, max_tokens, messages, tools: [memory.definition], betas: ["context-management-2025-06-27"] });
 * const results = await Promise.all(reply.content.filter((b) => b.type === "tool_use" && b.name === "memory").map(memory.toolResult));
 */
export function createMemoryTool(cap: string | FsCap, options: ClientOptions = {}): MemoryTool {
  const handle = createMemoryHandler(fsCapTextFiles(typeof cap === "string" ? new FsCap(cap, options) : cap));
  return {
    definition: MEMORY_TOOL_DEFINITION,
    run: async (input) => (await handle(input)).text,
    call: handle,
    toolResult: async (block) => {
      const result = await handle(block.input);
      return { type: "tool_result", tool_use_id: block.id, content: result.text, is_error: result.isError };
    },
  };
}

/**
 * The memory tool's command handler over a cap, for apps that already run
 * their own tool loop (e.g. as the `memory` handler of a tool runner).
 *
 * @example
 * const memory = memoryToolHandler(new FsCap(process.env.CAPVAULT_CAP!));
 * const text = await memory({ command: "view", path: "/memories" });
 */
export function memoryToolHandler(cap: FsCap): (input: unknown) => Promise<string> {
  return createMemoryTool(cap).run;
}
