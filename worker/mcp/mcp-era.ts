import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";

/** Where a 2026-era request names its protocol version: in each request's `_meta`. */
export const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";

/**
 * Whether a POST claims the 2026-07-28 era: its `_meta` names a protocol
 * version, or its MCP-Protocol-Version header is a revision newer than any
 * the pinned SDK speaks. Only such requests go on to the SDK v2 (which has
 * the last word, mcp-modern.ts, and answers an unknown version in `_meta`
 * with the versions it supports); anything else, malformed bodies and
 * unknown old revisions included, keeps its 2025 answer.
 */
export function claimsModernEra(request: Request, body: unknown): boolean {
  const header = request.headers.get("mcp-protocol-version");
  const unknownHeader =
    header !== null && !SUPPORTED_PROTOCOL_VERSIONS.includes(header) && header > LATEST_PROTOCOL_VERSION;
  if (unknownHeader && /^\d{4}-\d{2}-\d{2}$/.test(header)) return true;
  const params = (body as { params?: unknown } | null)?.params;
  const meta = typeof params === "object" && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  return typeof meta === "object" && meta !== null && PROTOCOL_VERSION_META_KEY in meta;
}
