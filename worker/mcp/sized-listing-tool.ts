import { z } from "zod";
import type { DirEntry } from "../../memory-tool/text-files.ts";
import { type CapTool, DIR_PATH_HELP, has } from "./cap-tool.ts";
import { LIST_MAX_ENTRIES } from "./directory-tools.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";

export const listDirectoryWithSizesTool: CapTool = {
  name: "list_directory_with_sizes",
  allowed: (rights) => has(rights, "list"),
  register(server, { files }) {
    server.registerTool(
      "list_directory_with_sizes",
      {
        description: `List a directory of this capability with file sizes, sorted by name or by size (largest first; a directory counts as 0), then totals; at most ${LIST_MAX_ENTRIES} entries. Paths are relative to the capability's root.`,
        inputSchema: {
          path: z.string().default("").describe(DIR_PATH_HELP),
          sortBy: z.enum(["name", "size"]).optional().default("name").describe("Sort entries by name or size"),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async ({ path, sortBy }) => {
        const listing = await files.list(path, LIST_MAX_ENTRIES);
        if (!listing.ok) return errorResult(listing.error);
        const entries = listing.value.entries;
        const sizeOf = (e: DirEntry) => (e.type === "file" ? (e.size ?? 0) : 0);
        // As the official server: names by localeCompare, sizes largest first (a stable sort, so ties keep name order).
        const sorted = entries.toSorted((a, b) => a.name.localeCompare(b.name));
        if (sortBy === "size") sorted.sort((a, b) => sizeOf(b) - sizeOf(a));
        const lines = sorted.map((e) =>
          e.type === "dir"
            ? `[DIR] ${e.name.padEnd(30)} `
            : `[FILE] ${e.name.padEnd(30)} ${formatSize(sizeOf(e)).padStart(10)}`,
        );
        const fileCount = entries.filter((e) => e.type === "file").length;
        const total = entries.reduce((sum, e) => sum + sizeOf(e), 0);
        lines.push("", `Total: ${fileCount} files, ${entries.length - fileCount} directories`);
        lines.push(`Combined size: ${formatSize(total)}`);
        if (!listing.value.complete) lines.push(`(stopped after ${LIST_MAX_ENTRIES} entries)`);
        return textResult(lines.join("\n"));
      },
    );
  },
};

/** The official server's formatSize: bytes up to 1 KiB, then two decimals of KB, MB, GB, TB. */
export function formatSize(bytes: number): string {
  const units = ["B", "KB", "MB", "GB", "TB"];
  if (bytes <= 0) return "0 B";
  const i = Math.floor(Math.log(bytes) / Math.log(1024));
  if (i <= 0) return `${bytes} ${units[0]}`;
  const unit = Math.min(i, units.length - 1);
  return `${(bytes / 1024 ** unit).toFixed(2)} ${units[unit]}`;
}
