/**
 * One implementation of the bisimulation reached over HTTP: sends a request,
 * observes its answer, and normalises only what is per instance (tokens, ids,
 * times, cursors), so the model's, R2's and disk's observations compare.
 */
import { type CapPick, hex, type Json, type Observation, type VaultRequest } from "../model/vault-model.ts";

/** An implementation reached over HTTP: the caps it minted in this sequence, by role. */
export interface HttpImpl {
  name: "r2" | "disk";
  /** The vault's origin, as its cap URLs start. */
  vaultUrl: string;
  tokens: string[];
  ids: string[];
}

const UNKNOWN_TOKEN = "a".repeat(48);
const MALFORMED_TOKEN = "not-a-token";
const UNKNOWN_ID = "a".repeat(16);

function tokenFor(impl: HttpImpl, pick: CapPick): string {
  if ("bogus" in pick) return pick.bogus === "unknown" ? UNKNOWN_TOKEN : MALFORMED_TOKEN;
  return impl.tokens[pick.role] ?? UNKNOWN_TOKEN;
}

function pathQuery(path: string | null, raw: string | undefined): string[] {
  if (raw !== undefined) return [`path=${raw}`];
  return path === null ? [] : [`path=${encodeURIComponent(path)}`];
}

/** Sends one request and observes it, normalising only what is per instance. */
export async function perform(
  impl: HttpImpl,
  request: VaultRequest,
  raw: string | undefined,
): Promise<{ observation: Observation; cursor: string | null }> {
  const base = `${impl.vaultUrl}/object/${tokenFor(impl, request.cap)}`;
  const url = (route: string, query: string[]) => `${base}${route}${query.length ? `?${query.join("&")}` : ""}`;
  let response: Response;
  switch (request.op) {
    case "info":
      response = await fetch(base);
      break;
    case "revoke":
      response = await fetch(base, { method: "DELETE" });
      break;
    case "read": {
      const headers: Record<string, string> = {};
      if (request.range !== undefined) headers.range = request.range;
      if (request.ifNoneMatch !== undefined) headers["if-none-match"] = request.ifNoneMatch;
      response = await fetch(url("/file", pathQuery(request.path, raw)), { headers });
      break;
    }
    case "write": {
      const headers: Record<string, string> = {};
      if (request.contentType !== undefined) headers["content-type"] = request.contentType;
      if (request.ifMatch !== undefined) headers["if-match"] = request.ifMatch;
      if (request.ifNoneMatch !== undefined) headers["if-none-match"] = request.ifNoneMatch;
      response = await fetch(url("/file", pathQuery(request.path, raw)), {
        method: "PUT",
        headers,
        body: request.content,
      });
      break;
    }
    case "delete":
      response = await fetch(url("/file", pathQuery(request.path, raw)), { method: "DELETE" });
      break;
    case "mkdir":
    case "rmdir":
      response = await fetch(url("/folder", pathQuery(request.path, raw)), {
        method: request.op === "mkdir" ? "PUT" : "DELETE",
      });
      break;
    case "stat":
      response = await fetch(url("/stat", pathQuery(request.path, raw)));
      break;
    case "list": {
      const query = pathQuery(request.path, raw);
      if (request.limit !== undefined) query.push(`limit=${encodeURIComponent(request.limit)}`);
      if (request.cursor !== undefined) query.push(`cursor=${encodeURIComponent(request.cursor)}`);
      if (request.depth !== undefined) query.push(`depth=${encodeURIComponent(request.depth)}`);
      response = await fetch(url("/list", query));
      break;
    }
    case "move":
      response = await fetch(`${base}/move`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: request.body,
      });
      break;
    case "subdir":
      response = await fetch(`${base}/subdir`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: request.body,
      });
      break;
    case "children":
      response = await fetch(`${base}/children`);
      break;
    case "revokeChild": {
      const child = "role" in request.child ? (impl.ids[request.child.role] ?? UNKNOWN_ID) : UNKNOWN_ID;
      response = await fetch(`${base}/children/${child}`, { method: "DELETE" });
      break;
    }
    case "versions": {
      const query = pathQuery(request.path, raw);
      if (request.limit !== undefined) query.push(`limit=${encodeURIComponent(request.limit)}`);
      if (request.cursor !== undefined) query.push(`cursor=${encodeURIComponent(request.cursor)}`);
      response = await fetch(url("/versions", query));
      break;
    }
    case "readVersion":
      response = await fetch(`${base}/versions/${encodeURIComponent(request.id)}`);
      break;
    case "restore":
    case "redact":
      response = await fetch(`${base}/versions/${encodeURIComponent(request.id)}/${request.op}`, { method: "POST" });
      break;
  }
  return observe(impl, response, request.op);
}

const COMPARED_HEADERS = ["content-type", "etag", "content-range", "last-modified", "accept-ranges"];
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function observe(
  impl: HttpImpl,
  response: Response,
  op: VaultRequest["op"],
): Promise<{ observation: Observation; cursor: string | null }> {
  const isFileRead = op === "read" || op === "readVersion";
  const headers: Record<string, string> = {};
  for (const name of COMPARED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  if (
    headers["last-modified"] !== undefined &&
    new Date(headers["last-modified"]).toUTCString() === headers["last-modified"]
  ) {
    headers["last-modified"] = "<time>";
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const content = isFileRead && (response.status === 200 || response.status === 206);
  if (content) headers["content-length"] = response.headers.get("content-length") ?? "(none)";
  let body: Json;
  let cursor: string | null = null;
  if (content) body = { bytes: hex(bytes) };
  else if (headers["content-type"] === "application/json") {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as Json;
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) && typeof parsed.cursor === "string")
      cursor = parsed.cursor;
    body = normaliseJson(impl, parsed, "", op === "versions");
  } else body = bytes.length === 0 ? null : { unexpected: new TextDecoder().decode(bytes) };
  return { observation: { status: response.status, headers, body }, cursor };
}

/**
 * Maps per-instance values to comparable ones; anything unrecognised is left raw so that it shows as a difference.
 * Version ids and their cursors are NOT per instance: each root (one per backend per sequence) has a journal of its
 * own counting from 1, so R2, disk and the model must agree on them exactly. A version's `actor` is a cap id (per
 * instance, so mapped to its role like `id`) and its `at` a time.
 */
export function normaliseJson(impl: HttpImpl, value: Json, key = "", versionPage = false): Json {
  if (Array.isArray(value)) {
    const items = key === "children" ? orderChildren(value) : value;
    return items.map((item) => normaliseJson(impl, item));
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normaliseJson(impl, v, k, versionPage)]));
  }
  if (typeof value !== "string") return value;
  switch (key) {
    case "token": {
      const role = impl.tokens.indexOf(value);
      return role >= 0 ? `<token:${role}>` : value;
    }
    case "url": {
      const role = impl.tokens.findIndex((token) => value === `${impl.vaultUrl}/object/${token}`);
      return role >= 0 ? `<url:${role}>` : value;
    }
    case "id":
    case "parent":
    case "actor": {
      const role = impl.ids.indexOf(value);
      return role >= 0 ? `<id:${role}>` : value;
    }
    case "createdAt":
    case "expiresAt":
    case "modified":
    case "at":
      return ISO_TIME.test(value) && new Date(value).toISOString() === value ? "<time>" : value;
    case "cursor":
      return versionPage ? value : "<cursor>";
    default:
      return value;
  }
}

/**
 * Children are listed by creation time; two minted within the same
 * millisecond have no defined order, so ties (and only ties) are put in mint
 * order. An order that is not by creation time is left alone, to show.
 */
function orderChildren(children: Json[]): Json[] {
  const created = children.map((c) =>
    c !== null && typeof c === "object" && !Array.isArray(c) ? String(c.createdAt) : "",
  );
  if (created.some((t, i) => i > 0 && t < created[i - 1]!)) return children;
  return children
    .map((child, i) => ({ child, i }))
    .sort((a, b) => (created[a.i]! < created[b.i]! ? -1 : created[a.i]! > created[b.i]! ? 1 : a.i - b.i))
    .map(({ child }) => child);
}
