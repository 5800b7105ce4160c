import { z } from "zod";
import { EDIT_ATTEMPTS } from "../../memory-tool/memory-edit.ts";
import { MAX_TEXT_BYTES } from "../../memory-tool/text-files.ts";
import { yieldTurn } from "../../shared/yield-turn.ts";
import { FOLDER_OP_LIMIT, isFolderMoveRefusal } from "../folder-ops.ts";
import { type CapTool, has, PATH_HELP } from "./cap-tool.ts";
import { mcpRefusal } from "./mcp-refusals.ts";
import { applyEditsInTurns, MAX_EDITS } from "./text-edits.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";
import { moveDirectory } from "./tree-tools.ts";
import { unifiedDiffInTurns } from "./unified-diff.ts";

export const writeFileTool: CapTool = {
  name: "write_file",
  allowed: (rights) => has(rights, "write"),
  register(server, { files }) {
    server.registerTool(
      "write_file",
      {
        description:
          "Create a text file, or replace it entirely, in this capability. Folders need no creating. Paths are relative to the capability's root.",
        inputSchema: {
          path: z.string().describe(PATH_HELP),
          content: z.string().describe("The whole new content (UTF-8)."),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { destructiveHint: true, idempotentHint: true },
      },
      async ({ path, content }) => {
        const written = await files.writeText(path, content);
        return written.ok ? textResult(`Successfully wrote to ${path}`) : errorResult(written.error);
      },
    );
  },
};

export const editFileTool: CapTool = {
  name: "edit_file",
  allowed: (rights) => has(rights, "read", "write"),
  register(server, { files }) {
    server.registerTool(
      "edit_file",
      {
        description: `Make exact-text replacements in a text file of this capability and return a git-style diff. Each oldText must appear exactly once (after the edits before it); if any edit does not apply, nothing is written. At most ${MAX_EDITS} edits per call. The write only lands if the file did not change since it was read. Paths are relative to the capability's root.`,
        inputSchema: {
          path: z.string().describe(PATH_HELP),
          edits: z
            .array(
              z.object({
                oldText: z.string().describe("Text to find, exactly."),
                newText: z.string().describe("Text to put in its place."),
              }),
            )
            .min(1),
          dryRun: z.boolean().default(false).describe("Return the diff without writing."),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { destructiveHint: true },
      },
      async ({ path, edits, dryRun }) => {
        for (let attempt = 0; attempt < EDIT_ATTEMPTS; attempt++) {
          const file = await files.readText(path, MAX_TEXT_BYTES);
          if (!file.ok) return errorResult(file.error);
          // A turn of the runtime between the long synchronous steps (search, diff, write): on a 1 MiB
          // file each is tens of ms, and together they held up every other request (see yield-turn.ts).
          await yieldTurn();
          // Search and diff also take turns inside, every few ms of work.
          const edited = await applyEditsInTurns(file.value.text, edits);
          if (!edited.ok) return errorResult(edited.error);
          await yieldTurn();
          const diff = fenced(await unifiedDiffInTurns(path, file.value.text, edited.value));
          if (dryRun) return textResult(diff);
          await yieldTurn();
          // If-Match: another writer in between makes this fail, and the edits are redone on the new text.
          const written = await files.writeText(path, edited.value, { ifMatch: file.value.etag });
          if (written.ok) return textResult(diff);
          if (written.error.code !== "precondition_failed") return errorResult(written.error);
        }
        return errorResult(mcpRefusal("editKeptChanging"));
      },
    );
  },
};

export const getFileInfoTool: CapTool = {
  name: "get_file_info",
  allowed: (rights) => has(rights, "read") || has(rights, "list"),
  register(server, { files }) {
    server.registerTool(
      "get_file_info",
      {
        description:
          "Describe a file or a directory of this capability, one 'key: value' line each, with the official filesystem server's keys where the vault knows them (size in bytes, modified, isDirectory, isFile), then etag (only with the read right) and contentType. Paths are relative to the capability's root; \"\" is the root.",
        inputSchema: { path: z.string().default("").describe(PATH_HELP) },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async ({ path }) => {
        const stat = await files.stat(path);
        if (!stat.ok) return errorResult(stat.error);
        const s = stat.value;
        if (s.type === "dir") return textResult("isDirectory: true\nisFile: false");
        return textResult(
          [
            `size: ${s.size}`,
            // As the official server prints a Date.
            `modified: ${new Date(s.modified)}`,
            "isDirectory: false",
            "isFile: true",
            ...(s.etag === undefined ? [] : [`etag: ${s.etag}`]),
            `contentType: ${s.contentType}`,
          ].join("\n"),
        );
      },
    );
  },
};

export const deleteFileTool: CapTool = {
  name: "delete_file",
  allowed: (rights) => has(rights, "delete"),
  register(server, { files }) {
    server.registerTool(
      "delete_file",
      {
        description:
          "Delete one file of this capability (a folder disappears with its last file). Paths are relative to the capability's root.",
        inputSchema: { path: z.string().describe(PATH_HELP) },
        outputSchema: TEXT_OUTPUT,
        annotations: { destructiveHint: true },
      },
      async ({ path }) => {
        const removed = await files.delete(path);
        return removed.ok ? textResult(`Successfully deleted ${path}`) : errorResult(removed.error);
      },
    );
  },
};

export const moveFileTool: CapTool = {
  name: "move_file",
  allowed: (rights) => has(rights, "write", "delete"),
  register(server, context) {
    const { files } = context;
    server.registerTool(
      "move_file",
      {
        description: `Move or rename a file or a directory within this capability. A file fails with conflict if the destination exists. A directory (at most ${FOLDER_OP_LIMIT} files and folders, else refused whole) is merged into an existing one, refused before anything moves if a file would land on a file. Both paths are relative to the capability's root.`,
        inputSchema: { source: z.string().describe(PATH_HELP), destination: z.string().describe(PATH_HELP) },
        outputSchema: TEXT_OUTPUT,
        annotations: { destructiveHint: true },
      },
      async ({ source, destination }) => {
        const moved = await files.move(source, destination);
        if (isFolderMoveRefusal(moved)) return moveDirectory(context, source, destination);
        return moved.ok ? textResult(`Successfully moved ${source} to ${destination}`) : errorResult(moved.error);
      },
    );
  },
};

/**
 * The reference wraps its diff in a fence longer than any backtick run inside
 * it. One pass for the longest run: growing the fence and searching again
 * per backtick was quadratic (a 150 KB run took seconds).
 */
export function fenced(diff: string): string {
  let longest = 0;
  for (let at = diff.indexOf("`"); at !== -1; ) {
    let end = at + 1;
    while (diff.charCodeAt(end) === 96) end++;
    longest = Math.max(longest, end - at);
    at = diff.indexOf("`", end);
  }
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}diff\n${diff}${fence}\n\n`;
}
