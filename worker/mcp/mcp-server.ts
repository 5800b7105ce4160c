import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import { RIGHTS, type Right } from "../../shared/rights.ts";
import { RELEASE } from "../../shared/state-format.ts";
import { rootedFiles } from "./cap-files.ts";
import { registerCapResources } from "./cap-resources.ts";
import type { CapTool, CapToolContext } from "./cap-tool.ts";
import { searchFileContentsTool } from "./content-search-tool.ts";
import { createSubdirCapTool } from "./delegation-tool.ts";
import { directoryTreeTool, listDirectoryTool } from "./directory-tools.ts";
import { deleteFileTool, editFileTool, getFileInfoTool, moveFileTool, writeFileTool } from "./file-tools.ts";
import { createDirectoryTool, listAllowedDirectoriesTool } from "./folder-tools.ts";
import { registerSubscriptions } from "./mcp-subscriptions.ts";
import { readMediaFileTool } from "./media-tool.ts";
import { readFileTool, readMultipleFilesTool, readTextFileTool } from "./read-tools.ts";
import { answerWithin, budgetedFiles, RequestBudget } from "./request-budget.ts";
import { currentScope, type RequestScope, scopedContext } from "./request-scope.ts";
import { searchFilesTool } from "./search-tool.ts";
import { SharedTransport } from "./shared-transport.ts";
import { listDirectoryWithSizesTool } from "./sized-listing-tool.ts";
import { registerCapSkills } from "./skills.ts";
import { deleteDirectoryTool, readTextLinesTool } from "./tree-tools.ts";
import { listVersionsTool, restoreVersionTool } from "./version-tools.ts";

/**
 * Every tool, in the order clients list them: the official filesystem
 * server's, in its order and with its names, arguments and result shapes,
 * then the cap's own.
 */
export const CAP_TOOLS: readonly CapTool[] = [
  readFileTool,
  readTextFileTool,
  readMediaFileTool,
  readMultipleFilesTool,
  writeFileTool,
  editFileTool,
  createDirectoryTool,
  listDirectoryTool,
  listDirectoryWithSizesTool,
  directoryTreeTool,
  moveFileTool,
  searchFilesTool,
  getFileInfoTool,
  listAllowedDirectoriesTool,
  deleteFileTool,
  createSubdirCapTool,
  listVersionsTool,
  restoreVersionTool,
  searchFileContentsTool,
  deleteDirectoryTool,
  readTextLinesTool,
];

// The server never asks the client for schema-checked input (elicitation), so
// it needs no JSON Schema compiler; Ajv's code generation is not allowed in Workers anyway.
const noElicitation: jsonSchemaValidator = {
  getValidator: () => () => ({ valid: false, data: undefined, errorMessage: "this server does not elicit input" }),
};

/**
 * An MCP server whose whole world is one cap: only the tools its rights
 * allow, every path relative to its root. Its budget lasts as long as the
 * server (the endpoint uses {@link sharedCapServer}; this serves one client
 * over a transport of its own, e.g. in memory).
 *
 * @example
 * const server = createCapMcpServer({ files, cap, origin }, info.rights);
 * await server.connect(transport);
 */
export function createCapMcpServer(context: Omit<CapToolContext, "budget">, rights: readonly Right[]): McpServer {
  const budget = new RequestBudget();
  const files = budgetedFiles(rootedFiles(context.files), budget);
  const scope: RequestScope = { context: { ...context, files, budget }, budget };
  return capMcpServer(rights, scope.context, () => scope);
}

/**
 * The endpoint's server for caps with exactly `rights`, built once per
 * isolate: rebuilding the server, its tool table and schemas on every
 * request cost more than the call itself. It holds no cap: each request
 * runs its calls in a {@link RequestScope} that names its cap and budget.
 */
export function sharedCapServer(rights: readonly Right[]): SharedTransport {
  const key = RIGHTS.filter((r) => rights.includes(r)).join(",");
  let transport = sharedServers.get(key);
  if (!transport) {
    transport = new SharedTransport();
    const server = capMcpServer(rights, scopedContext, currentScope);
    // Connecting only sets the transport's handlers: its start() does nothing and is done at once.
    void server.connect(transport);
    transport.deliver = requestHandling(server);
    sharedServers.set(key, transport);
  }
  return transport;
}

/**
 * The SDK's own handling of a request that is known to be one (the private
 * `_onrequest` of its Protocol, SDK pinned at 1.32.2). Checked here, so an
 * SDK without it fails the first request loudly rather than answering wrongly.
 */
function requestHandling(server: McpServer): (request: JSONRPCRequest) => void {
  const protocol = server.server as unknown as { _onrequest?: (request: JSONRPCRequest) => void };
  if (typeof protocol._onrequest !== "function") throw new Error("MCP SDK without Protocol._onrequest");
  return (request) => protocol._onrequest!(request);
}

/** What the server tells clients about itself, in both eras. */
export const CAP_INSTRUCTIONS =
  'These tools reach one capvault capability: a folder and nothing outside it. Every path is relative to that folder\'s root ("" or "/" is the root, and a leading "/" is the root too, so "/notes/a.md" is "notes/a.md"); host paths, \'~\' and \'..\' are refused. The tools offered are exactly those the capability\'s rights allow. Errors start with a wire code such as path_escapes, forbidden or not_found.';

/** At most one per set of rights (32). */
const sharedServers = new Map<string, SharedTransport>();

function capMcpServer(rights: readonly Right[], context: CapToolContext, scope: () => RequestScope): McpServer {
  const server = new McpServer(
    { name: "capvault", version: RELEASE },
    {
      capabilities: { tools: {} },
      jsonSchemaValidator: noElicitation,
      instructions: CAP_INSTRUCTIONS,
    },
  );
  const serialServer = oneCallAtATime(server, scope);
  for (const tool of CAP_TOOLS) {
    if (tool.allowed(rights)) tool.register(serialServer, context);
  }
  registerCapResources(server, rights, scope);
  registerCapSkills(server, rights, scope);
  registerSubscriptions(server, rights, scope);
  return server;
}

type Register = (name: string, config: unknown, callback: (...args: unknown[]) => unknown) => unknown;

/**
 * `server`, whose tools' callbacks run through the request's queue, one at a
 * time, each answer charged to the request's answer budget.
 */
function oneCallAtATime(server: McpServer, scope: () => RequestScope): McpServer {
  const register = server.registerTool.bind(server) as unknown as Register;
  const serial = Object.create(server) as McpServer;
  const wrapped: Register = (name, config, callback) => {
    const readOnly = (config as { annotations?: { readOnlyHint?: boolean } }).annotations?.readOnlyHint === true;
    return register(name, config, (...args) => {
      const { budget } = scope();
      return budget.serial(() => answerWithin(budget, readOnly, async () => callback(...args)));
    });
  };
  (serial as unknown as { registerTool: Register }).registerTool = wrapped;
  return serial;
}
