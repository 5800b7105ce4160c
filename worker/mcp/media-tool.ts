import { Buffer } from "node:buffer";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { yieldTurn } from "../../shared/yield-turn.ts";
import { capPath } from "./cap-files.ts";
import { type CapTool, has, PATH_HELP } from "./cap-tool.ts";
import { errorResult } from "./tool-result.ts";

/** Bytes read_media_file returns: a few photos' worth, and within one request's answer budget as base64. */
export const MAX_MEDIA_BYTES = 8 * 1024 * 1024;

/** The official server's table: the type follows the name's extension, not the stored content type. */
export const MIME_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".svg": "image/svg+xml",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
  ".ogg": "audio/ogg",
  ".flac": "audio/flac",
};

export const readMediaFileTool: CapTool = {
  name: "read_media_file",
  allowed: (rights) => has(rights, "read"),
  register(server, { files }) {
    server.registerTool(
      "read_media_file",
      {
        description: `Read a file of this capability (up to ${MAX_MEDIA_BYTES} bytes) as base64 with its MIME type: images and audio as image/audio content, anything else as an embedded resource whose uri is file:/// plus the path from the capability's root. Paths are relative to the capability's root.`,
        inputSchema: { path: z.string().describe(PATH_HELP) },
        annotations: { readOnlyHint: true },
      },
      async ({ path }): Promise<CallToolResult> => {
        const bytes = await files.readBytes(path, MAX_MEDIA_BYTES);
        if (!bytes.ok) return errorResult(bytes.error);
        const rel = capPath(path);
        const dot = rel.lastIndexOf(".");
        const extension = dot > rel.lastIndexOf("/") + 1 ? rel.slice(dot).toLowerCase() : "";
        const mimeType = MIME_TYPES[extension] ?? "application/octet-stream";
        const data = await base64InTurns(bytes.value);
        const item = mimeType.startsWith("image/")
          ? { type: "image" as const, data, mimeType }
          : mimeType.startsWith("audio/")
            ? { type: "audio" as const, data, mimeType }
            : { type: "resource" as const, resource: { uri: fileUri(rel), mimeType, blob: data } };
        // Once: with no output schema MCP asks for no structuredContent, where the official server repeats the base64.
        return { content: [item] };
      },
    );
  },
};

/** Bytes encoded at a time: a multiple of 3, so the slices' base64 joins into the whole's. */
const BASE64_SLICE = 3 * 256 * 1024;

/** `bytes` as base64, a turn of the runtime between slices: 8 MiB at once held up other requests. */
export async function base64InTurns(bytes: Uint8Array): Promise<string> {
  const parts: string[] = [];
  for (let at = 0; at < bytes.byteLength; at += BASE64_SLICE) {
    if (at > 0) await yieldTurn();
    const end = Math.min(at + BASE64_SLICE, bytes.byteLength);
    parts.push(Buffer.from(bytes.buffer, bytes.byteOffset + at, end - at).toString("base64"));
  }
  return parts.join("");
}

/**
 * The path as a file: URL with the cap's root as `/`, escaped as Node's
 * pathToFileURL escapes (`%`, `\`, newlines and tabs first, then what a URL
 * path escapes). It names no host path: the root's own location stays hidden.
 */
export function fileUri(rel: string): string {
  const url = new URL("file:///");
  url.pathname = `/${rel.replace(/[%\\\n\r\t]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`)}`;
  return url.href;
}
