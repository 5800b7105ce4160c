import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MAX_TEXT_BYTES } from "../../memory-tool/text-files.ts";
import type { CapFiles } from "./cap-files.ts";
import { type CapTool, has, PATH_HELP } from "./cap-tool.ts";
import { headLines, tailLines } from "./line-window.ts";
import { mcpRefusal } from "./mcp-refusals.ts";
import { callsFit } from "./request-budget.ts";
import { errorResult, TEXT_OUTPUT, textResult } from "./tool-result.ts";

/** Paths per read_multiple_files call; the request's read budget bounds the bytes. */
export const MAX_MULTIPLE_FILES = 100;

const WHOLE_FILE = `the whole file is read (UTF-8, up to ${MAX_TEXT_BYTES} bytes) and`;
const textInput = {
  path: z.string().describe(PATH_HELP),
  tail: z.number().optional().describe(`If provided, returns only the last N lines of the file (${WHOLE_FILE} cut)`),
  head: z.number().optional().describe(`If provided, returns only the first N lines of the file (${WHOLE_FILE} cut)`),
};

/** read_text_file and read_file (which the official server keeps, deprecated): one handler. */
function registerTextRead(server: McpServer, files: CapFiles, name: string, description: string) {
  server.registerTool(
    name,
    { description, inputSchema: textInput, outputSchema: TEXT_OUTPUT, annotations: { readOnlyHint: true } },
    async ({ path, head, tail }) => {
      // As the official server: 0 means "not given".
      if (head && tail) return errorResult(mcpRefusal("headAndTail"));
      const file = await files.readText(path, MAX_TEXT_BYTES);
      if (!file.ok) return errorResult(file.error);
      const { text } = file.value;
      return textResult(tail ? tailLines(text, tail) : head ? headLines(text, head) : text);
    },
  );
}

export const readTextFileTool: CapTool = {
  name: "read_text_file",
  allowed: (rights) => has(rights, "read"),
  register(server, { files }) {
    registerTextRead(
      server,
      files,
      "read_text_file",
      `Read a text file (UTF-8, up to ${MAX_TEXT_BYTES} bytes) of this capability; 'head' or 'tail' returns only the first or last N lines. Paths are relative to the capability's root.`,
    );
  },
};

export const readFileTool: CapTool = {
  name: "read_file",
  allowed: (rights) => has(rights, "read"),
  register(server, { files }) {
    registerTextRead(
      server,
      files,
      "read_file",
      `Read a whole text file (UTF-8, up to ${MAX_TEXT_BYTES} bytes) from this capability, as read_text_file does. Paths are relative to the capability's root.`,
    );
  },
};

export const readMultipleFilesTool: CapTool = {
  name: "read_multiple_files",
  allowed: (rights) => has(rights, "read"),
  // The context is read per call, not at registration: on a shared server it is the calling request's.
  register(server, context) {
    server.registerTool(
      "read_multiple_files",
      {
        description: `Read up to ${MAX_MULTIPLE_FILES} text files of this capability at once; each comes back as "<path>:\\n<content>\\n", or "<path>: Error - <code>: <message>" without stopping the others, separated by "\\n---\\n". Paths are relative to the capability's root.`,
        inputSchema: { paths: z.array(z.string().describe(PATH_HELP)).min(1).max(MAX_MULTIPLE_FILES) },
        outputSchema: TEXT_OUTPUT,
        annotations: { readOnlyHint: true },
      },
      async ({ paths }) => {
        // Answered whole or refused whole: a call the request's storage calls cannot all cover makes none.
        const fits = callsFit(context.budget, paths.length);
        if (!fits.ok) return errorResult(fits.error);
        // One at a time: the request's read budget is charged in order, and one storage call is in flight.
        const parts: string[] = [];
        for (const path of paths) {
          const file = await context.files.readText(path, MAX_TEXT_BYTES);
          // A dead cap fails the call, so the endpoint answers it as it answers any dead cap.
          if (!file.ok && file.error.code === "no_such_cap") return errorResult(file.error);
          parts.push(
            file.ok ? `${path}:\n${file.value.text}\n` : `${path}: Error - ${file.error.code}: ${file.error.message}`,
          );
        }
        return textResult(parts.join("\n---\n"));
      },
    );
  },
};
