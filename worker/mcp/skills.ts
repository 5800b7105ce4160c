import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Right } from "../../shared/rights.ts";
import { decodedUri, mimeTypeOf, SKILL_FILE, skillPathUri } from "./cap-resources.ts";
import { mcpRefusal } from "./mcp-refusals.ts";
import { fileUri } from "./media-tool.ts";
import {
  answerSpent,
  REQUEST_MAX_ANSWER_CHARS,
  REQUEST_MAX_LISTED,
  REQUEST_MAX_LISTINGS,
  REQUEST_MAX_READ_CHARS,
  REQUEST_MAX_STORAGE_CALLS,
  type RequestBudget,
} from "./request-budget.ts";
import type { RequestScope } from "./request-scope.ts";
import { canonicalUri, listSkills, readDirectory, type SkillScope, skillAt } from "./skill-entries.ts";

export const SKILLS_EXTENSION_ID = "io.modelcontextprotocol/skills";
export const SKILLS_LIST_METHOD = "skills/list";
export const SKILLS_GET_METHOD = "skills/get";
export const DIRECTORY_READ_METHOD = "resources/directory/read";

/** The methods the extension adds, in both eras. */
export const SKILLS_METHODS = [SKILLS_LIST_METHOD, SKILLS_GET_METHOD, DIRECTORY_READ_METHOD] as const;

/** The capability a cap with read and list declares: the extension, inline settings (SEP-2133), directory reads. */
export const SKILLS_CAPABILITY = { [SKILLS_EXTENSION_ID]: { directoryRead: true } };

/** Skills are read (SKILL.md) and listed (a skill's files): a cap needs both rights to be offered them. */
export const offersSkills = (rights: readonly Right[]) => rights.includes("read") && rights.includes("list");

const cursorParams = z.object({ cursor: z.string().optional(), _meta: z.unknown().optional() }).passthrough();
const uriParams = z.object({ uri: z.string(), _meta: z.unknown().optional() }).passthrough();
const ListSkillsRequest = z.object({ method: z.literal(SKILLS_LIST_METHOD), params: cursorParams.optional() });
const GetSkillRequest = z.object({ method: z.literal(SKILLS_GET_METHOD), params: uriParams });
const DirectoryReadRequest = z.object({
  method: z.literal(DIRECTORY_READ_METHOD),
  params: uriParams.extend({ cursor: z.string().optional() }),
});

/**
 * The Skills extension (SEP-2640) on the cap's shared server: `skills/list`,
 * `skills/get` and `resources/directory/read` (skill-entries.ts has the
 * rules), declared in the capabilities as the extension states. Each call
 * runs through the request's queue and budget like a tool call; the SKILL.md
 * and other skill files are read as resources (cap-resources.ts).
 */
export function registerCapSkills(server: McpServer, rights: readonly Right[], scope: () => RequestScope): void {
  if (!offersSkills(rights)) return;
  const protocol = server.server;
  protocol.registerCapabilities({ extensions: SKILLS_CAPABILITY });
  const run = <T extends object>(work: (skills: SkillScope, budget: RequestBudget) => Promise<T>) => {
    const { budget, context } = scope();
    return budget.serial(async () => {
      if (budget.answered >= REQUEST_MAX_ANSWER_CHARS)
        throw new McpError(ErrorCode.InvalidRequest, answerSpent().message);
      const answer = await work({ cap: context.cap, budget }, budget);
      const chars = JSON.stringify(answer).length;
      if (budget.answered + chars > REQUEST_MAX_ANSWER_CHARS)
        throw new McpError(ErrorCode.InvalidRequest, answerSpent().message);
      budget.answered += chars;
      return answer;
    });
  };
  protocol.setRequestHandler(ListSkillsRequest, (request) =>
    run(async (skills) => {
      const page = refusedAs(ErrorCode.InvalidParams, await listSkills(skills, request.params?.cursor ?? null));
      return page.nextCursor === null ? { skills: page.skills } : { skills: page.skills, nextCursor: page.nextCursor };
    }),
  );
  protocol.setRequestHandler(GetSkillRequest, (request) =>
    run(async (skills) => {
      const uri = request.params.uri;
      const folder = skillFolderOf(uri);
      const skill = folder === null ? null : refusedAs(ErrorCode.InvalidParams, await skillAt(skills, folder));
      // Another spelling of the URI may name the same folder: only the one the skill is served at is it.
      if (skill === null || skill.uri !== canonicalUri(uri))
        throw new McpError(ErrorCode.InvalidParams, "No skill is served at that URI");
      return { skill };
    }),
  );
  protocol.setRequestHandler(DirectoryReadRequest, (request) =>
    run(async (skills) => {
      const { uri, cursor } = request.params;
      const dir = directoryOf(uri);
      const page =
        dir === null
          ? null
          : refusedAs(
              ErrorCode.InvalidParams,
              await readDirectory(skills, dir.path, cursor ?? null, dir.uriOf, mimeTypeOf),
            );
      if (page === null) throw new McpError(ErrorCode.InvalidParams, "Not a directory resource of this capability");
      return page.nextCursor === null
        ? { resources: page.resources }
        : { resources: page.resources, nextCursor: page.nextCursor };
    }),
  );
}

/** The request budget's refusals, as skill-entries.ts gives them. */
const SPENT = new Set([
  mcpRefusal("listingsSpent", { max: REQUEST_MAX_LISTINGS }).message,
  mcpRefusal("listedSpent", { max: REQUEST_MAX_LISTED }).message,
  mcpRefusal("callsSpent", { max: REQUEST_MAX_STORAGE_CALLS }).message,
  mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS }).message,
]);

/** A result's value, or its refusal thrown as a JSON-RPC error: `code`, or Invalid Request. */
function refusedAs<T>(
  code: number,
  result: { ok: true; value: T } | { ok: false; error: { code: string; message: string } },
): T {
  if (result.ok) return result.value;
  // A spent budget and a right the cap lacks are the request's fault, not the URI's.
  const request = result.error.code === "forbidden" || SPENT.has(result.error.message);
  throw new McpError(request ? ErrorCode.InvalidRequest : code, `${result.error.code}: ${result.error.message}`);
}

/** The cap folder a `skill://<folder>/SKILL.md` URI names, or `null`. */
function skillFolderOf(uri: string): string | null {
  const path = decodedUri(uri);
  if (path === null || path.scheme !== "skill:" || !path.path.endsWith(`/${SKILL_FILE}`)) return null;
  return path.path.slice(0, -SKILL_FILE.length - 1);
}

/** The folder a `skill://` or `file:///` directory URI names (one trailing `/` allowed), and how to name its children. */
function directoryOf(uri: string): { path: string; uriOf: (path: string) => string } | null {
  const decoded = decodedUri(uri);
  if (decoded === null) return null;
  const path = decoded.path.endsWith("/") ? decoded.path.slice(0, -1) : decoded.path;
  // A leading "/" would be read as the root by the cap's path parser: no such directory here.
  if (path.startsWith("/")) return null;
  if (decoded.scheme === "skill:") return path === "" ? null : { path, uriOf: skillPathUri };
  return { path, uriOf: fileUri };
}
