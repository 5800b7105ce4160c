import { z } from "zod";
import { refusal } from "../../shared/refusals.ts";
import type { Result } from "../../shared/result.ts";
import { deleteFolderTree, FOLDER_OP_LIMIT, moveFolderTree } from "../folder-ops.ts";
import { LINES_MAX, linesOf } from "../line-read.ts";
import { capDir, capPath } from "./cap-files.ts";
import { type CapTool, type CapToolContext, DIR_PATH_HELP, has, PATH_HELP } from "./cap-tool.ts";
import { mcpRefusal } from "./mcp-refusals.ts";
import { chargeCalls, REQUEST_MAX_READ_CHARS } from "./request-budget.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";

/**
 * Storage calls a whole-folder operation may make, charged before it starts:
 * per entry a listing, the step, the try as one entry (a link) and (for a
 * move) a folder made, a merge check and a folder removed. It is most of one
 * request's budget, so such a call is best sent alone.
 */
export const FOLDER_OP_CALLS = 5 * FOLDER_OP_LIMIT;

/** Charges a folder operation's worst case to the request, or refuses it whole. */
export function chargeFolderOp(context: CapToolContext): Result<null> {
  return chargeCalls(context.budget, FOLDER_OP_CALLS);
}

/** move_file's answer when its source is a directory: the folder move of worker/folder-ops.ts, never overwriting. */
export async function moveDirectory(context: CapToolContext, source: string, destination: string) {
  const spent = chargeFolderOp(context);
  if (!spent.ok) return errorResult(spent.error);
  const moved = await moveFolderTree(context.cap, capDir(source), capDir(destination), false);
  if (!moved.ok) return errorResult(moved.error);
  const { files, folders } = moved.value;
  return textResult(`Successfully moved ${source} to ${destination} (${files} files, ${folders} folders)`);
}

export const deleteDirectoryTool: CapTool = {
  name: "delete_directory",
  allowed: (rights) => has(rights, "delete", "list"),
  // The context is read per call, not at registration: on a shared server it is the calling request's.
  register(server, context) {
    server.registerTool(
      "delete_directory",
      {
        description: `Delete a directory of this capability. Without 'recursive' only an empty one; with it, everything below (at most ${FOLDER_OP_LIMIT} files and folders, else refused whole and nothing deleted: delete its subdirectories first). Each file is deleted and kept in its history as delete_file would. Paths are relative to the capability's root.`,
        inputSchema: {
          path: z.string().describe(DIR_PATH_HELP),
          recursive: z.boolean().optional().describe("Delete everything below too, as rm -r."),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { destructiveHint: true },
      },
      async ({ path, recursive }) => {
        const dir = capDir(path);
        if (!recursive) {
          const spent = chargeCalls(context.budget);
          if (!spent.ok) return errorResult(spent.error);
          const gone = await context.cap.removeFolder(dir);
          return gone.ok ? textResult(`Successfully deleted directory ${path}`) : errorResult(gone.error);
        }
        const spent = chargeFolderOp(context);
        if (!spent.ok) return errorResult(spent.error);
        const gone = await deleteFolderTree(context.cap, dir);
        if (!gone.ok) return errorResult(gone.error);
        const { files, folders } = gone.value;
        return textResult(`Successfully deleted directory ${path} (${files} files, ${folders} folders)`);
      },
    );
  },
};

export const readTextLinesTool: CapTool = {
  name: "read_text_lines",
  allowed: (rights) => has(rights, "read"),
  register(server, context) {
    server.registerTool(
      "read_text_lines",
      {
        description: `Read lines of a UTF-8 text file of this capability, from 'offset' (1-based, default 1), at most 'limit' (default and most ${LINES_MAX}) and 1 MiB. Returns JSON {lines, offset, totalLines, nextOffset, size}: nextOffset is where to read on, null at the end of the file. Paths are relative to the capability's root.`,
        inputSchema: {
          path: z.string().describe(PATH_HELP),
          offset: z.number().int().min(1).optional().describe("The first line to return, 1-based."),
          limit: z.number().int().min(1).max(LINES_MAX).optional().describe("How many lines at most."),
        },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async ({ path, offset, limit }) => {
        const spent = chargeCalls(context.budget);
        if (!spent.ok) return errorResult(spent.error);
        const read = (await context.cap.readFile(capPath(path), { range: null, ifNoneMatch: null })) as Result<Body>;
        if (!read.ok) return errorResult(read.error);
        if (read.value.status !== "body") return errorResult(refusal("unavailable"));
        const { meta, body } = read.value;
        // The whole file is scanned for its line count: its bytes count toward the request's reads.
        if (context.budget.read + meta.size > REQUEST_MAX_READ_CHARS) {
          await body.cancel().catch(() => undefined);
          return errorResult(mcpRefusal("readSpent", { max: REQUEST_MAX_READ_CHARS }));
        }
        context.budget.read += meta.size;
        const page = await linesOf(meta.size, body, { offset: offset ?? 1, limit: limit ?? LINES_MAX });
        return page.ok ? textResult(JSON.stringify(page.value)) : errorResult(page.error);
      },
    );
  },
};

// RPC stubs wrap return types; this is the plain shape the object returns.
type Body =
  | { status: "body"; meta: { size: number }; body: ReadableStream<Uint8Array> }
  | { status: "not_modified" | "unsatisfiable"; meta: { size: number } };
