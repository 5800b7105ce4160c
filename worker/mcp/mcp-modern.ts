import type { JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import {
  createMcpHandler,
  isLegacyRequest,
  type jsonSchemaValidator,
  type McpHttpHandler,
  ProtocolError,
  Server,
} from "@modelcontextprotocol/server";
import { RIGHTS, type Right } from "../../shared/rights.ts";
import { RELEASE } from "../../shared/state-format.ts";
import { RESOURCE_NOT_FOUND } from "./cap-resources.ts";
import { LISTEN_CAPABILITIES } from "./mcp-listen.ts";
import { CAP_INSTRUCTIONS, sharedCapServer } from "./mcp-server.ts";
import { forwardSkills } from "./skills-modern.ts";

/** The 2026-07-28 answer for an unknown resource (SEP-2164): Invalid params. */
const INVALID_PARAMS = -32602;

/** What the cap's server answers, whatever the era: the one table of tools and resources. */
const FORWARDED = ["tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read"] as const;

/** Whether the SDK v2 takes a request that {@link claimsModernEra} let through as 2026-era. */
export async function isModernRequest(request: Request, body: unknown): Promise<boolean> {
  return !(await isLegacyRequest(request, body));
}

/**
 * MCP 2026-07-28 on the endpoint, by the official SDK v2's handler: it owns
 * the era's wire (server/discover, the per-request `_meta` envelope, the
 * Mcp-Method and Mcp-Name headers, caching hints, its error shapes); 2025-era
 * requests never reach it (see mcp-era.ts). The route imports this module
 * only for a request that claims the era: the SDK is large, and loading it
 * for every first request of an isolate delayed them all. Every method it serves is answered by
 * that same shared server, so both eras list and run the same tools and
 * resources under the same rights, queue and budget. One handler per set of rights.
 */
export function modernCapHandler(rights: readonly Right[]): McpHttpHandler {
  const key = RIGHTS.filter((r) => rights.includes(r)).join(",");
  let handler = handlers.get(key);
  if (!handler) {
    handler = createMcpHandler(() => modernServer(rights), { legacy: "reject", responseMode: "json" });
    handlers.set(key, handler);
  }
  return handler;
}

/** At most one per set of rights (32). */
const handlers = new Map<string, McpHttpHandler>();

/**
 * The answers come from the pinned SDK's server, which checked them against
 * the schemas it lists; this server never elicits input. Ajv's code
 * generation is not allowed in Workers anyway.
 */
const alreadyChecked: jsonSchemaValidator = {
  getValidator: (() => (input: unknown) => ({
    valid: true,
    data: input,
    errorMessage: undefined,
  })) as jsonSchemaValidator["getValidator"],
};

function modernServer(rights: readonly Right[]): Server {
  const server = new Server(
    { name: "capvault", version: RELEASE },
    {
      capabilities: { tools: {}, ...(rights.includes("read") ? { resources: { ...LISTEN_CAPABILITIES } } : {}) },
      instructions: CAP_INSTRUCTIONS,
      jsonSchemaValidator: alreadyChecked,
    },
  );
  forwardSkills(server, rights);
  const shared = sharedCapServer(rights);
  for (const method of FORWARDED) {
    if (method.startsWith("resources/") && !rights.includes("read")) continue;
    const forward = async (request: { method: string; params?: Record<string, unknown> }) => {
      const { _meta, ...params } = request.params ?? {};
      const [answer] = await shared.call([{ jsonrpc: "2.0", id: 0, method, params } as JSONRPCRequest]);
      if (answer && "result" in answer) return answer.result;
      const error = (answer as { error?: { code: number; message: string; data?: unknown } }).error;
      const code = error?.code === RESOURCE_NOT_FOUND ? INVALID_PARAMS : (error?.code ?? -32603);
      throw new ProtocolError(code, error?.message ?? "no answer", error?.data);
    };
    (server.setRequestHandler as (method: string, handler: typeof forward) => void)(method, forward);
  }
  return server;
}
