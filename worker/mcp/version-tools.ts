import { z } from "zod";
import { MAX_VERSION_PAGE } from "../../durable-objects/cap-versions.ts";
import type { Result } from "../../shared/result.ts";
import type { Version, VersionPage, WriteResult } from "../../shared/wire-types.ts";
import { capPath } from "./cap-files.ts";
import { type CapTool, has, PATH_HELP } from "./cap-tool.ts";
import { chargeCalls, chargeListed, chargeListing } from "./request-budget.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";

/** Hex digits of a version's SHA-256 shown: enough to tell versions apart, short enough to scan. */
const SHA_PREFIX = 12;

export const listVersionsTool: CapTool = {
  name: "list_versions",
  allowed: (rights) => has(rights, "read"),
  // The context is read per call, not at registration: on a shared server it is the calling request's.
  register(server, context) {
    server.registerTool(
      "list_versions",
      {
        description: `List the versions of a file of this capability, newest first, one line each: id, operation (created, modified, deleted, moved), time, size, sha256 prefix, actor (the id of the cap that did it), and "redacted" when its bytes are gone. Works for deleted files. At most ${MAX_VERSION_PAGE} per call; pass the cursor it gives for older ones. Restore one with restore_version. Paths are relative to the capability's root.`,
        inputSchema: {
          path: z.string().describe(PATH_HELP),
          cursor: z.string().optional().describe("From a previous call, to list older versions."),
          limit: z.number().int().min(1).max(MAX_VERSION_PAGE).default(MAX_VERSION_PAGE).describe("Versions per call."),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async ({ path, cursor, limit }) => {
        const allowed = chargeListing(context.budget, limit);
        if (!allowed.ok) return errorResult(allowed.error);
        const page = (await context.cap.listVersions(
          capPath(path),
          cursor ?? null,
          String(allowed.value),
        )) as Result<VersionPage>;
        if (!page.ok) return errorResult(page.error);
        chargeListed(context.budget, page.value.versions.length);
        return textResult(versionListing(path, page.value));
      },
    );
  },
};

export const restoreVersionTool: CapTool = {
  name: "restore_version",
  // As the cap's object decides: a restore answers the old bytes' hashes and their path.
  allowed: (rights) => has(rights, "read") && has(rights, "write"),
  register(server, context) {
    server.registerTool(
      "restore_version",
      {
        description:
          "Write a version's bytes (an id from list_versions) back to its file in this capability, as a new version: a deleted file comes back, a changed one gets its old content. The file's current content stays in its history. Paths are relative to the capability's root.",
        inputSchema: { versionId: z.string().describe('A version id from list_versions, e.g. "3".') },
        outputSchema: TEXT_OUTPUT,
        annotations: { destructiveHint: true },
      },
      async ({ versionId }) => {
        const spent = chargeCalls(context.budget);
        if (!spent.ok) return errorResult(spent.error);
        const restored = (await context.cap.restoreVersion(versionId)) as Result<WriteResult & { path: string }>;
        if (!restored.ok) return errorResult(restored.error);
        const { path, size, etag, sha256 } = restored.value;
        return textResult(
          `Restored version ${versionId} to ${path} as a new version: ${size} bytes, etag "${etag}", sha256 ${sha256}`,
        );
      },
    );
  },
};

function versionListing(path: string, page: VersionPage): string {
  if (page.versions.length === 0) return `No versions of ${path}`;
  const lines = [`Versions of ${path}, newest first:`, ...page.versions.map(versionLine)];
  if (page.cursor !== null) lines.push(`More: call again with cursor "${page.cursor}" for older versions`);
  return lines.join("\n");
}

function versionLine(v: Version): string {
  const size = v.size === null ? "size unknown" : `${v.size} bytes`;
  const sha = v.sha256 === null ? "sha256 -" : `sha256 ${v.sha256.slice(0, SHA_PREFIX)}`;
  return `${v.id} ${v.operation} ${v.at} ${size} ${sha} by ${v.actor}${v.redacted ? " redacted" : ""}`;
}
