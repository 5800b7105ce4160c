import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { CapFailure } from "../../shared/result.ts";

export function textResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }] };
}

/**
 * A refusal as an MCP tool error: `<wire code>: <message>`. Messages are the
 * vault's fixed texts, which never name a root, prefix or host path.
 */
export function errorResult(failure: CapFailure): CallToolResult {
  return { content: [{ type: "text", text: `${failure.code}: ${failure.message}` }], isError: true };
}
