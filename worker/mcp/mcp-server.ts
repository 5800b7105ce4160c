import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import type { Right } from "../../shared/rights.ts";
import type { CapTool, CapToolContext } from "./cap-tool.ts";
import { createSubdirCapTool } from "./delegation-tool.ts";
import { directoryTreeTool, listDirectoryTool } from "./directory-tools.ts";
import {
  deleteFileTool,
  editFileTool,
  getFileInfoTool,
  moveFileTool,
  readFileTool,
  writeFileTool,
} from "./file-tools.ts";
import { budgetedFiles, RequestBudget } from "./request-budget.ts";

/** Every tool, in the order clients list them. */
export const CAP_TOOLS: readonly CapTool[] = [
  readFileTool,
  writeFileTool,
  editFileTool,
  listDirectoryTool,
  directoryTreeTool,
  getFileInfoTool,
  deleteFileTool,
  moveFileTool,
  createSubdirCapTool,
];

// The server never asks the client for schema-checked input (elicitation), so
// it needs no JSON Schema compiler; Ajv's code generation is not allowed in Workers anyway.
const noElicitation: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: "this server does not elicit input" }),
};

/**
 * An MCP server whose whole world is one cap: only the tools its rights
 * allow, every path relative to its root. Built per request (stateless).
 *
 * @example
 * const server = createCapMcpServer({ files, cap, origin }, info.rights);
 * await server.connect(transport);
 */
export function createCapMcpServer(context: CapToolContext, rights: readonly Right[]): McpServer {
  const server = new McpServer(
    { name: "capvault", version: "0.1.0" },
    {
      capabilities: { tools: {} },
      jsonSchemaValidator: noElicitation,
      instructions:
        "These tools reach one capvault capability: a folder and nothing outside it. Every path is relative to that folder's root (\"\" is the root); absolute paths and '..' are refused. The tools offered are exactly those the capability's rights allow. Errors start with a wire code such as path_escapes, forbidden or not_found.",
    },
  );
  // Built per HTTP request, so this budget is the request's, however many calls a batch holds.
  const budget = new RequestBudget();
  const bounded = { ...context, files: budgetedFiles(context.files, budget) };
  const serialServer = oneCallAtATime(server, budget);
  for (const tool of CAP_TOOLS) {
    if (tool.allowed(rights)) tool.register(serialServer, bounded);
  }
  return server;
}

type Register = (name: string, config: unknown, callback: (...args: unknown[]) => unknown) => unknown;

/** `server`, whose tools' callbacks run through the request's queue, one at a time. */
function oneCallAtATime(server: McpServer, budget: RequestBudget): McpServer {
  const register = server.registerTool.bind(server) as unknown as Register;
  const serial = Object.create(server) as McpServer;
  const wrapped: Register = (name, config, callback) =>
    register(name, config, (...args) => budget.serial(async () => callback(...args)));
  (serial as unknown as { registerTool: Register }).registerTool = wrapped;
  return serial;
}
