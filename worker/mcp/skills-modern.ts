import type { JSONRPCRequest } from "@modelcontextprotocol/sdk/types.js";
import { ProtocolError, type Server } from "@modelcontextprotocol/server";
import type { Right } from "../../shared/rights.ts";
import { sharedCapServer } from "./mcp-server.ts";
import { offersSkills, SKILLS_CAPABILITY, SKILLS_METHODS } from "./skills.ts";

/**
 * The results' caching hints (SEP-2549, required on these results from
 * 2026-07-28): a skill listing is one cap's and changes with its files, so
 * it is private and not to be reused without asking again.
 */
export const SKILLS_CACHE_HINT = { ttlMs: 0, cacheScope: "private" } as const;

/** Params as sent: the shared server checks them with its own schemas. */
const asSent = {
  "~standard": { version: 1, vendor: "capvault", validate: (value: unknown) => ({ value }) },
} as const;

/**
 * The Skills extension on the 2026-07-28 server: declared as on the 2025
 * one, each method answered by the cap's shared server (skills.ts), so both
 * eras serve the same skills under the same rights, queue and budget.
 */
export function forwardSkills(server: Server, rights: readonly Right[]): void {
  if (!offersSkills(rights)) return;
  server.registerCapabilities({ extensions: SKILLS_CAPABILITY });
  const shared = sharedCapServer(rights);
  for (const method of SKILLS_METHODS) {
    const forward = async (sent: Record<string, unknown>) => {
      const { _meta, ...params } = sent;
      const [answer] = await shared.call([{ jsonrpc: "2.0", id: 0, method, params } as JSONRPCRequest]);
      if (answer && "result" in answer) return { ...answer.result, ...SKILLS_CACHE_HINT };
      const error = (answer as { error?: { code: number; message: string; data?: unknown } }).error;
      throw new ProtocolError(error?.code ?? -32603, error?.message ?? "no answer", error?.data);
    };
    (server.setRequestHandler as (method: string, schemas: unknown, handler: typeof forward) => void)(
      method,
      { params: asSent },
      forward,
    );
  }
}
