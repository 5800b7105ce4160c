import { anthropic } from "@ai-sdk/anthropic";
import { FsCap } from "../typescript/fs-cap.ts";
import { createMemoryTool } from "../typescript/memory-tool.ts";
import type { ClientOptions } from "../typescript/types.ts";

// Every error text of the memory handler starts so, and no success text does:
// the one sign that survives a tool result stored and replayed as plain text.
const ERROR_PREFIX = "Error: ";

// Fixed, so an unforeseen failure can put nothing of the cap (its URL, a host path) in front of the model.
const FAILED = `${ERROR_PREFIX}unavailable: the memory command failed; nothing is known of its effect`;

export interface CapMemoryToolOptions extends ClientOptions {
  /**
   * Told of a failure that is no refusal of the vault's (a bug, say), which the
   * model sees only as a fixed error text; refusals are results, not failures.
   */
  onError?: (error: unknown) => void;
}

/** What {@link capMemoryTool} returns: the AI SDK's `memory_20250818` tool, its output the result string. */
export type CapMemoryTool = ReturnType<typeof anthropic.tools.memory_20250818<string>>;

/**
 * Anthropic's memory tool for the AI SDK, backed by a cap: `/memories` is the
 * cap's root, so the model can reach nothing else. Each command runs through
 * the SDK's memory tool, the same code as the vault's `/memory` route, so the
 * results are the reference tool's strings. A refusal (a missing right, a
 * revoked cap, a path that escapes) is the tool's output, sent to the model as
 * an error result (`is_error`), never thrown. Needs the read, write, delete
 * and list rights for every command; fewer rights refuse some.
 *
 * @example
 * const result = await generateText({
 *   model: anthropic("claude-sonnet-4-5"),
 *   tools: { memory: capMemoryTool(process.env.CAPVAULT_CAP!) },
 *   stopWhen: stepCountIs(10),
 *   prompt: "Remember that I prefer tea.",
 * });
 */
export function capMemoryTool(cap: string | FsCap, options: CapMemoryToolOptions = {}): CapMemoryTool {
  const { onError, ...client } = options;
  const memory = createMemoryTool(typeof cap === "string" ? new FsCap(cap, client) : cap);
  return anthropic.tools.memory_20250818({
    execute: async (input) => {
      try {
        return await memory.run(input);
      } catch (error) {
        onError?.(error);
        return FAILED;
      }
    },
    // The provider marks `error-text` as `is_error: true`, as the reference tool runner answers a refusal.
    toModelOutput: ({ output }) =>
      output.startsWith(ERROR_PREFIX) ? { type: "error-text", value: output } : { type: "text", value: output },
  });
}
