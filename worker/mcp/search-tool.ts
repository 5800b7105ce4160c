import { z } from "zod";
import { capDir } from "./cap-files.ts";
import { type CapTool, DIR_PATH_HELP, has } from "./cap-tool.ts";
import { anyMatches, compileGlobs, MAX_EXCLUDE_PATTERNS } from "./glob-filters.ts";
import { mayList } from "./request-budget.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";
import { walkCutNote, walkEntries } from "./tree-walk.ts";

/** Entries one search walks, matches or not; the request's budget (6,000 listed, 80 listings) bounds it again. */
export const SEARCH_MAX_ENTRIES = 5000;
/** Levels one search descends: keys of 1,024 bytes hold at most 512. */
const SEARCH_MAX_DEPTH = 512;

export const searchFilesTool: CapTool = {
  name: "search_files",
  allowed: (rights) => has(rights, "list"),
  register(server, context) {
    server.registerTool(
      "search_files",
      {
        description: `Recursively find files and directories whose path relative to 'path' matches a glob ('*.md' in that directory, '**/*.md' at any depth; '*', '?', '**', [...] and {a,b}), leaving out excludePatterns and everything under them. Returns one path per line, relative to the capability's root, or "No matches found"; walks at most ${SEARCH_MAX_ENTRIES} entries. Paths are relative to the capability's root.`,
        inputSchema: {
          path: z.string().default("").describe(DIR_PATH_HELP),
          pattern: z.string(),
          excludePatterns: z.array(z.string()).max(MAX_EXCLUDE_PATTERNS).optional().default([]),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async ({ path, pattern, excludePatterns }) => {
        const globs = compileGlobs([pattern, ...excludePatterns]);
        if (!globs.ok) return errorResult(globs.error);
        const [wanted, ...excluded] = globs.value;
        const meter = context.budget.glob;
        const dir = capDir(path);
        const matches: string[] = [];
        const walk = await walkEntries(context.files, dir, {
          maxEntries: SEARCH_MAX_ENTRIES,
          maxDepth: SEARCH_MAX_DEPTH,
          mayList: () => mayList(context.budget),
          skip(rel) {
            const skip = anyMatches(excluded, rel, meter);
            if (!skip.ok || skip.value) return skip;
            const found = anyMatches([wanted!], rel, meter);
            if (!found.ok) return found;
            if (found.value) matches.push(dir === "" ? rel : `${dir}/${rel}`);
            return skip;
          },
        });
        if (!walk.ok) return errorResult(walk.error);
        const text = matches.length > 0 ? matches.join("\n") : "No matches found";
        return textResult(text + walkCutNote(walk.value.cut, SEARCH_MAX_ENTRIES));
      },
    );
  },
};
