import { z } from "zod";
import { MAX_TTL_SECONDS, parseGrantRequest } from "../../shared/grant-request.ts";
import { RIGHTS } from "../../shared/rights.ts";
import { capPath } from "./cap-files.ts";
import { type CapTool, DIR_PATH_HELP, has } from "./cap-tool.ts";
import { chargeCalls } from "./request-budget.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";

export const createSubdirCapTool: CapTool = {
  name: "create_subdir_cap",
  allowed: (rights) => has(rights, "subdir"),
  // The context is read per call, not at registration: on a shared server it is the calling request's.
  register(server, context) {
    server.registerTool(
      "create_subdir_cap",
      {
        description:
          "Mint a new capability for a directory of this one, to delegate to a sub-agent: it reaches only that directory, with at most this capability's rights and expiry. Returns JSON {url, id, rights, expiresAt}; the url is the secret to hand over (an MCP server at url + \"/mcp\"). Paths are relative to this capability's root.",
        inputSchema: {
          path: z.string().default("").describe(`${DIR_PATH_HELP} "" keeps the same root with fewer rights.`),
          rights: z
            .array(z.enum(RIGHTS))
            .optional()
            .describe("Rights for the new capability (default: all of this one's)."),
          ttlSeconds: z.number().int().min(1).max(MAX_TTL_SECONDS).optional().describe("Lifetime in seconds."),
          label: z.string().max(256).optional().describe("A name to recognise it by in listings."),
          history: z
            .enum(["all"])
            .optional()
            .describe(
              '"all": it sees the version history this one sees; left out, only versions written after it is made.',
            ),
        },
        outputSchema: TEXT_OUTPUT,
      },
      async ({ path, rights, ttlSeconds, label, history }) => {
        const request = parseGrantRequest({
          path: capPath(path),
          rights: rights ?? null,
          ttlSeconds: ttlSeconds ?? null,
          label: label ?? null,
          history: history ?? null,
        });
        if (!request.ok) return errorResult(request.error);
        const spent = chargeCalls(context.budget);
        if (!spent.ok) return errorResult(spent.error);
        const minted = await context.cap.mintChild(request.value, context.origin);
        if (!minted.ok) return errorResult(minted.error);
        const { url, id, rights: granted, expiresAt } = minted.value;
        return textResult(JSON.stringify({ url, id, rights: granted, expiresAt }, null, 2));
      },
    );
  },
};
