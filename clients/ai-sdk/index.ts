/**
 * The vault for the Vercel AI SDK (`ai`, `@ai-sdk/anthropic`): Anthropic's
 * memory tool over a cap (docs/ai-sdk.md).
 */
export { type CapMemoryTool, type CapMemoryToolOptions, capMemoryTool } from "./memory.ts";
