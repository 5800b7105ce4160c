import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CapObject } from "../../durable-objects/cap-object.ts";
import type { Right } from "../../shared/rights.ts";
import type { Env } from "../env.ts";
import type { CapFiles } from "./cap-files.ts";
import type { RequestBudget } from "./request-budget.ts";

/** What a tool works on: one cap, and nothing else. */
export interface CapToolContext {
  files: CapFiles;
  /** The request's budget; the files above already charge it. */
  budget: RequestBudget;
  cap: DurableObjectStub<CapObject>;
  /** The origin minted cap URLs use. */
  origin: string;
  /** The worker's bindings, for a search the cap's object granted (content-search-tool.ts); absent off the endpoint. */
  env?: Env;
}

/**
 * One MCP tool and the rights it needs. A tool is offered only when the cap
 * holds them; the cap's object checks the rights again on every call.
 * `register` runs once per shared server, outside any request: a tool reads
 * its context's `cap` and `origin` when called, never at registration.
 */
export interface CapTool {
  name: string;
  allowed(rights: readonly Right[]): boolean;
  register(server: McpServer, context: CapToolContext): void;
}

export const PATH_HELP =
  'Path relative to this capability\'s root, e.g. "notes/today.md" (or "/notes/today.md": a leading "/" is that root). Host paths, ".." and "." segments are refused.';
export const DIR_PATH_HELP =
  'Directory relative to this capability\'s root; "" (the default) or "/" is the root itself.';

export const has = (rights: readonly Right[], ...needed: Right[]) => needed.every((r) => rights.includes(r));
