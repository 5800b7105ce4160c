import { z } from "zod";
import { refusal } from "../../shared/refusals.ts";
import type { SearchPage } from "../../shared/wire-types.ts";
import {
  parseSearchQuery,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_BYTES,
  SEARCH_MAX_CONTEXT,
  SEARCH_MAX_FILE_BYTES,
  SEARCH_MAX_FILES,
  SEARCH_MAX_LIMIT,
  searchThroughCap,
} from "../content-search.ts";
import { capDir } from "./cap-files.ts";
import { type CapTool, DIR_PATH_HELP, has } from "./cap-tool.ts";
import { callsFit, chargeCalls, REQUEST_MAX_STORAGE_CALLS } from "./request-budget.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";

/**
 * Content search, which the official filesystem server lacks: GET /search
 * (worker/content-search.ts) as a tool, answered as ripgrep prints it
 * (`path:line:text`, context lines `path-line-text`, `path:count`, or paths).
 * One search reads up to its own bound of files, so it takes the request's
 * whole budget of storage calls: it runs first in a request or not at all.
 */
export const searchFileContentsTool: CapTool = {
  name: "search_file_contents",
  allowed: (rights) => has(rights, "read", "list"),
  register(server, context) {
    server.registerTool(
      "search_file_contents",
      {
        description: `Search the contents of the files below 'path' with a regular expression (RE2 syntax: no backreferences or lookaround; linear time), line by line like ripgrep. mode "lines" (the default) returns "path:line:text" for each matching line and "path-line-text" for 'context' lines around it; "count" returns "path:count"; "files" one path per line. 'fileGlob' keeps only files whose name (or, with a '/', whose path below 'path') matches. One call reads at most ${SEARCH_MAX_FILES} files and ${SEARCH_MAX_BYTES / 1024} KiB (less for a long pattern), skipping binary files, files over ${SEARCH_MAX_FILE_BYTES / 1024} KiB and files with very long lines (named at the end); when more is left it ends with a cursor to pass back. Paths are relative to the capability's root.`,
        inputSchema: {
          path: z.string().default("").describe(DIR_PATH_HELP),
          pattern: z.string().describe("A regular expression in RE2 syntax, matched against each line"),
          fileGlob: z.string().optional(),
          mode: z.enum(["lines", "count", "files"]).optional().default("lines"),
          context: z.number().int().min(0).max(SEARCH_MAX_CONTEXT).optional().default(0),
          ignoreCase: z.boolean().optional().default(false),
          limit: z.number().int().min(1).max(SEARCH_MAX_LIMIT).optional().default(SEARCH_DEFAULT_LIMIT),
          cursor: z.string().optional(),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async ({ path, pattern, fileGlob, mode, context: around, ignoreCase, limit, cursor }) => {
        const query = parseSearchQuery({
          pattern,
          glob: fileGlob ?? null,
          mode,
          context: String(around),
          ignoreCase: String(ignoreCase),
          limit: String(limit),
          cursor: cursor ?? null,
        });
        if (!query.ok) return errorResult(query.error);
        const fits = callsFit(context.budget, REQUEST_MAX_STORAGE_CALLS);
        if (!fits.ok) return errorResult(fits.error);
        chargeCalls(context.budget, REQUEST_MAX_STORAGE_CALLS);
        const env = context.env;
        if (!env) return errorResult(refusal("backendMissing"));
        const page = await searchThroughCap(context.cap, env, capDir(path), query.value);
        return page.ok ? textResult(searchText(page.value)) : errorResult(page.error);
      },
    );
  },
};

/** A page as ripgrep would print it, then what was skipped and how to go on. */
export function searchText(page: SearchPage): string {
  const lines = page.matches
    ? page.matches.map((m) => `${m.path}${m.match ? ":" : "-"}${m.line}${m.match ? ":" : "-"}${m.text}`)
    : page.counts
      ? page.counts.map((c) => `${c.path}:${c.count}`)
      : (page.files ?? []);
  let text = lines.length > 0 ? lines.join("\n") : "No matches found";
  if (page.skipped.length > 0)
    text += `\n(not searched: ${page.skipped.map((s) => `${s.path} (${s.reason.replace("_", " ")})`).join(", ")})`;
  if (page.cursor !== null) text += `\n(more files left to search: call again with cursor "${page.cursor}")`;
  return text;
}
