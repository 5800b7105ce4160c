import { z } from "zod";
import { type CapTool, DIR_PATH_HELP, has } from "./cap-tool.ts";
import { chargeCalls } from "./request-budget.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";

export const createDirectoryTool: CapTool = {
  name: "create_directory",
  allowed: (rights) => has(rights, "write"),
  register(server, { files }) {
    server.registerTool(
      "create_directory",
      {
        description:
          "Make sure files can be written under a directory of this capability (nested ones included); an existing directory succeeds silently, a file in the way is a conflict. The directory stays, empty, until deleted. Paths are relative to the capability's root.",
        inputSchema: { path: z.string().describe(DIR_PATH_HELP) },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false },
      },
      async ({ path }) => {
        const checked = await files.checkFolder(path);
        return checked.ok ? textResult(`Successfully created directory ${path}`) : errorResult(checked.error);
      },
    );
  },
};

export const listAllowedDirectoriesTool: CapTool = {
  name: "list_allowed_directories",
  allowed: () => true,
  register(server, context) {
    server.registerTool(
      "list_allowed_directories",
      {
        description:
          'The directories this server reaches: one, this capability\'s root, shown as "/". Paths are relative to the capability\'s root, with or without that leading "/".',
        inputSchema: {},
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async () => {
        // It reads no file, but it still asks the cap: a revoked cap answers no_such_cap here as everywhere.
        const spent = chargeCalls(context.budget);
        if (!spent.ok) return errorResult(spent.error);
        const alive = await context.cap.describe();
        return alive.ok ? textResult("Allowed directories:\n/") : errorResult(alive.error);
      },
    );
  },
};
