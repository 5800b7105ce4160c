import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from "@modelcontextprotocol/sdk/types.js";
import type { Right } from "../../shared/rights.ts";
import type { ListEntry, ListPage } from "../../shared/wire-types.ts";
import { base64InTurns, fileUri, MAX_MEDIA_BYTES, MIME_TYPES } from "./media-tool.ts";
import { answerSpent, chargeListed, chargeListing, REQUEST_MAX_ANSWER_CHARS } from "./request-budget.ts";
import type { RequestScope } from "./request-scope.ts";

/** Files a resources/list page names (a page of the cap's recursive listing). */
export const RESOURCES_PAGE = 100;

/** MCP's own code for an unknown resource in 2025-11-25; the 2026 era answers -32602 (see mcp-era.ts). */
export const RESOURCE_NOT_FOUND = -32002;

export const SKILL_FILE = "SKILL.md";

/**
 * The cap's files as MCP resources: `file:///<path>` from the cap's root
 * (`resources/list`, paged by the cap's own listing cursor; a template for
 * any path; `resources/read`, text when the bytes are UTF-8, else base64),
 * and every folder holding a SKILL.md also as `skill://<folder>/SKILL.md`
 * (the MCP Skills extension's URI). Offered with the read right; listing
 * needs list too, and the cap's object decides both on every call. Each
 * call goes through the request's queue and budget like a tool call.
 */
export function registerCapResources(server: McpServer, rights: readonly Right[], scope: () => RequestScope): void {
  if (!rights.includes("read")) return;
  const protocol = server.server;
  protocol.registerCapabilities({ resources: {} });
  protocol.setRequestHandler(ListResourcesRequestSchema, (request) => {
    const { budget, context } = scope();
    return budget.serial(async () => {
      if (!rights.includes("list")) return { resources: [] };
      const left = chargeListing(budget, RESOURCES_PAGE);
      if (!left.ok) throw new McpError(ErrorCode.InvalidRequest, left.error.message);
      const page = (await context.cap.listDir(
        "",
        request.params?.cursor ?? null,
        String(left.value),
        "0",
      )) as unknown as { ok: true; value: ListPage } | { ok: false; error: { code: string; message: string } };
      if (!page.ok) {
        const code = page.error.code === "bad_request" ? ErrorCode.InvalidParams : ErrorCode.InternalError;
        throw new McpError(code, `${page.error.code}: ${page.error.message}`);
      }
      chargeListed(budget, page.value.entries.length);
      const resources = page.value.entries.flatMap(asResources);
      return page.value.cursor === null ? { resources } : { resources, nextCursor: page.value.cursor };
    });
  });
  protocol.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [
      {
        uriTemplate: "file:///{+path}",
        name: "file",
        title: "A file of this capability",
        description: "Any file under this capability's root, by its path from that root.",
      },
      {
        uriTemplate: `skill://{+skill}/${SKILL_FILE}`,
        name: "skill",
        title: "A skill of this capability",
        description: `The ${SKILL_FILE} of a skill folder under this capability's root.`,
      },
    ],
  }));
  protocol.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const { budget, context } = scope();
    return budget.serial(async (): Promise<ReadResourceResult> => {
      const uri = request.params.uri;
      const path = pathOf(uri);
      if (path === null)
        throw new McpError(RESOURCE_NOT_FOUND, "Resource not found: not a file: or skill: URI of this capability");
      if (budget.answered >= REQUEST_MAX_ANSWER_CHARS)
        throw new McpError(ErrorCode.InvalidRequest, answerSpent().message);
      const bytes = await context.files.readBytes(path, MAX_MEDIA_BYTES);
      if (!bytes.ok) {
        const code = bytes.error.code === "not_found" ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams;
        throw new McpError(code, `${bytes.error.code}: ${bytes.error.message}`);
      }
      const content = await contentOf(uri, path, bytes.value);
      const chars = "text" in content ? content.text.length : content.blob.length;
      if (budget.answered + chars > REQUEST_MAX_ANSWER_CHARS)
        throw new McpError(ErrorCode.InvalidRequest, answerSpent().message);
      budget.answered += chars;
      return { contents: [content] };
    });
  });
}

/** A listed file as resources: itself, and its folder's skill when it is a SKILL.md. */
function asResources(entry: ListEntry): Resource[] {
  if (entry.type !== "file") return [];
  const name = entry.name.slice(entry.name.lastIndexOf("/") + 1);
  const file: Resource = {
    uri: fileUri(entry.name),
    name: entry.name,
    mimeType: mimeTypeOf(entry.name),
    size: entry.size,
  };
  if (name !== SKILL_FILE || !entry.name.includes("/")) return [file];
  const folder = entry.name.slice(0, -SKILL_FILE.length - 1);
  return [
    file,
    {
      uri: skillUri(folder),
      name: folder.slice(folder.lastIndexOf("/") + 1),
      mimeType: "text/markdown",
      size: entry.size,
    },
  ];
}

export function skillUri(folder: string): string {
  return skillPathUri(`${folder}/${SKILL_FILE}`);
}

/**
 * `skill://` and a cap path's segments: the first (the authority) encoded as
 * encodeURIComponent does, the rest as WHATWG URL serialises a path segment
 * (plus `%`, `/`, `\` and dot segments), as the official SDK spells skill
 * URIs, so its clients compare them byte for byte.
 */
export function skillPathUri(path: string): string {
  const [authority = "", ...rest] = path.split("/");
  return [`skill://${encodeURIComponent(authority)}`, ...rest.map(encodeSegment)].join("/");
}

function encodeSegment(segment: string): string {
  if (segment === "." || segment === "..") return segment.replaceAll(".", "%2E");
  return segment.replace(/[^\w!$&'()*+,.:;=@[\]|~-]/gu, (char) => encodeURIComponent(char));
}

/**
 * The cap path a resource URI names, or `null` for a URI of no file here.
 * `skill://<path>` names the file at that path, as a skill's entries list
 * its files (skill-entries.ts). What is left goes to the cap's path parser,
 * which refuses `..`, absolute and malformed paths as for every other route.
 */
export function pathOf(uri: string): string | null {
  const decoded = decodedUri(uri);
  if (decoded === null) return null;
  // A path that starts with "/" would be taken as the root's own "/" by the rooted files: no such resource.
  return decoded.path === "" || decoded.path.startsWith("/") ? null : decoded.path;
}

/** A `file:///` or `skill://` URI's scheme and percent-decoded path, as written (no query, no fragment), or `null`. */
export function decodedUri(uri: string): { scheme: "skill:" | "file:"; path: string } | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  if (url.search || url.hash) return null;
  try {
    if (url.protocol === "skill:") return { scheme: "skill:", path: decodeURIComponent(`${url.host}${url.pathname}`) };
    if (url.protocol === "file:" && url.host === "")
      return { scheme: "file:", path: decodeURIComponent(url.pathname.slice(1)) };
  } catch {}
  return null;
}

export function mimeTypeOf(path: string): string | undefined {
  const dot = path.lastIndexOf(".");
  const extension = dot > path.lastIndexOf("/") + 1 ? path.slice(dot).toLowerCase() : "";
  if (extension === ".md") return "text/markdown";
  return MIME_TYPES[extension];
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

async function contentOf(
  uri: string,
  path: string,
  bytes: Uint8Array,
): Promise<{ uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string }> {
  const known = mimeTypeOf(path);
  if (!known || known.startsWith("text/")) {
    try {
      return { uri, mimeType: known ?? "text/plain", text: strictUtf8.decode(bytes) };
    } catch {}
  }
  return { uri, mimeType: known ?? "application/octet-stream", blob: await base64InTurns(bytes) };
}
