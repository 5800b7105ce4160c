/**
 * capvault SDK: hold a capability to a folder of the vault, from Node, a
 * Worker or a browser (fetch only, no Node built-ins).
 *
 * @example
 * import { FsCap, CapError } from "capvault/client";
 * const fs = new FsCap(process.env.CAPVAULT_CAP!);
 * await fs.write("hello.txt", "hi");
 */
export { AdminClient } from "./admin-client.ts";
export { CapError, isCapError } from "./cap-error.ts";
export { FsCap } from "./fs-cap.ts";
export type { MemoryResult, MemoryTool, MemoryToolResultBlock } from "./memory-tool.ts";
export { createMemoryTool, MEMORY_TOOL_DEFINITION, memoryToolHandler } from "./memory-tool.ts";
export type * from "./types.ts";
