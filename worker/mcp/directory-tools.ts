import { z } from "zod";
import { MAX_DEPTH } from "../../storage-adapters/tree-page.ts";
import { capDir } from "./cap-files.ts";
import { type CapTool, DIR_PATH_HELP, has } from "./cap-tool.ts";
import { anyMatches, compileTreeExclusions, MAX_EXCLUDE_PATTERNS } from "./glob-filters.ts";
import { mayList } from "./request-budget.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";
import { type WalkEntry, walkCutNote, walkEntries } from "./tree-walk.ts";

/** Bounds that keep one call to a few dozen listings and a result a model can read. */
export const LIST_MAX_ENTRIES = 5000;
export const TREE_MAX_ENTRIES = 1000;
export const TREE_MAX_DEPTH = 10;

export const listDirectoryTool: CapTool = {
  name: "list_directory",
  allowed: (rights) => has(rights, "list"),
  register(server, { files }) {
    server.registerTool(
      "list_directory",
      {
        description: `List a directory of this capability, one "[DIR] name" or "[FILE] name" line per entry (at most ${LIST_MAX_ENTRIES}; an empty directory gives no lines). Paths are relative to the capability's root. With depth 0, every file below the directory, named by its path relative to it (a/b.txt); with depth N > 1, files down to N levels and each deeper folder once as [DIR].`,
        inputSchema: {
          path: z.string().default("").describe(DIR_PATH_HELP),
          depth: z
            .number()
            .int()
            .min(0)
            .max(MAX_DEPTH)
            .default(1)
            .describe("1 (default): direct children; 0: every file below; N: down to N levels"),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async ({ path, depth }) => {
        const listing = await files.list(path, LIST_MAX_ENTRIES, depth);
        if (!listing.ok) return errorResult(listing.error);
        const lines = listing.value.entries.map((e) => `${e.type === "dir" ? "[DIR]" : "[FILE]"} ${e.name}`);
        if (!listing.value.complete) lines.push(`(stopped after ${LIST_MAX_ENTRIES} entries)`);
        return textResult(lines.join("\n"));
      },
    );
  },
};

interface TreeNode {
  name: string;
  type: "file" | "directory";
  children?: TreeNode[];
  /** Not listed: deeper than maxDepth. */
  truncated?: true;
}

export const directoryTreeTool: CapTool = {
  name: "directory_tree",
  allowed: (rights) => has(rights, "list"),
  register(server, context) {
    server.registerTool(
      "directory_tree",
      {
        description: `A directory of this capability as a JSON tree of {name, type, children}, at most maxDepth levels (default and most ${TREE_MAX_DEPTH}) and ${TREE_MAX_ENTRIES} entries; directories not descended into are marked "truncated". excludePatterns are globs (a pattern without '*' also matches that name at any depth). Paths are relative to the capability's root.`,
        inputSchema: {
          path: z.string().default("").describe(DIR_PATH_HELP),
          excludePatterns: z.array(z.string()).max(MAX_EXCLUDE_PATTERNS).optional().default([]),
          maxDepth: z.number().int().min(1).max(TREE_MAX_DEPTH).default(TREE_MAX_DEPTH),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async ({ path, excludePatterns, maxDepth }) => {
        const excluded = compileTreeExclusions(excludePatterns);
        if (!excluded.ok) return errorResult(excluded.error);
        const meter = context.budget.glob;
        const tree = await walkEntries(context.files, capDir(path), {
          maxEntries: TREE_MAX_ENTRIES,
          maxDepth,
          skip: (rel) => anyMatches(excluded.value, rel, meter),
          mayList: () => mayList(context.budget),
        });
        if (!tree.ok) return errorResult(tree.error);
        const text = JSON.stringify(nest(tree.value.entries), null, 2);
        return textResult(text + walkCutNote(tree.value.cut, TREE_MAX_ENTRIES));
      },
    );
  },
};

/** Depth-first entries (each directory before its contents) into nested nodes. */
function nest(entries: readonly WalkEntry[]): TreeNode[] {
  const root: TreeNode[] = [];
  const stack: TreeNode[][] = [root];
  for (const entry of entries) {
    stack.length = entry.depth;
    const name = entry.path.slice(entry.path.lastIndexOf("/") + 1);
    const node: TreeNode = { name, type: entry.type === "dir" ? "directory" : "file" };
    stack[entry.depth - 1]!.push(node);
    if (entry.type === "dir") {
      if (entry.truncated) node.truncated = true;
      else {
        node.children = [];
        stack.push(node.children);
      }
    }
  }
  return root;
}
