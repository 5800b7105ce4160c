/**
 * capvault SDK: hold a capability to a folder of the vault, from Node, a
 * Worker or a browser (fetch only, no Node built-ins).
 *
 * @example
 * import { FsCap, CapError } from "capvault/client";
 * const fs = new FsCap(process.env.CAPVAULT_CAP!);
 * await fs.write("hello.txt", "hi");
 *
 * Types: the vault's JSON shapes (shared/wire-types.ts) under their wire
 * names, the SDK's own options (types.ts), and two older names kept as
 * aliases: `ChildCap` for `ChildView`, `RootRecord` for `RootView`.
 */
export type { ErrorCode } from "../../shared/error-codes.ts";
export type { HolderJwk } from "../../shared/holder-key.ts";
export type { Right } from "../../shared/rights.ts";
export type * from "../../shared/wire-types.ts";
export type { ChildView as ChildCap, RootView as RootRecord } from "../../shared/wire-types.ts";
export { AdminClient } from "./admin-client.ts";
export { CapError, isCapError } from "./cap-error.ts";
export type { WatchOptions } from "./cap-watch.ts";
export { FsCap } from "./fs-cap.ts";
export type { SearchOptions } from "./fs-cap-search.ts";
export type { LinesOptions } from "./fs-cap-trees.ts";
export type { HolderAlgorithm, HolderKeyFile } from "./holder.ts";
export { HolderKey } from "./holder.ts";
export type { MemoryResult, MemoryTool, MemoryToolResultBlock } from "./memory-tool.ts";
export { createMemoryTool, MEMORY_TOOL_DEFINITION, memoryToolHandler } from "./memory-tool.ts";
export type { ConnectLiveOptions, RpcCap, RpcCapPromise, RpcSubdirOptions, RpcWriteOptions } from "./rpc-cap.ts";
export { connect, connectLive, disconnect } from "./rpc-cap.ts";
export type * from "./types.ts";
