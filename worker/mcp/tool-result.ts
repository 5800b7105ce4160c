import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { CapFailure } from "../../shared/result.ts";

/** The output schema of every text tool, as the official filesystem server declares it. */
export const TEXT_OUTPUT = { content: z.string() };

/** A text answer, also as `structuredContent.content`, as the official filesystem server gives it. */
export function textResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], structuredContent: { content: text } };
}

/**
 * A refusal as an MCP tool error: `<wire code>: <message>`. Messages are the
 * vault's fixed texts, which never name a root, prefix or host path.
 */
export function errorResult(failure: CapFailure): CallToolResult {
  return { content: [{ type: "text", text: `${failure.code}: ${failure.message}` }], isError: true };
}
