import { type Context, Hono } from "hono";
import { parseGrantRequest } from "../shared/grant-request.ts";
import { refusal } from "../shared/refusals.ts";
import type { CapFailure, Result } from "../shared/result.ts";
import { settleBody } from "../shared/settle-body.ts";
import type { FolderDeleted, MoveResult } from "../shared/wire-types.ts";
import { readThroughCap } from "./cap-read.ts";
import { type AppEnv, type CapStub, capStub, problemFor, publicOrigin, requirePublicOrigin } from "./cap-stub.ts";
import { fileResponse } from "./file-response.ts";
import { deleteFolderTree, isFolderMoveRefusal, moveFolderTree } from "./folder-ops.ts";
import { holderGate } from "./holder-proof.ts";
import { errorResponse } from "./http-error.ts";
import { jsonObject, readJsonBody, SMALL_JSON_BYTES } from "./json-body.ts";
import { jsonResponse } from "./json-response.ts";
import { parseLineWindow, readLines } from "./line-read.ts";
import { mcpRoutes } from "./mcp/mcp-route.ts";
import { memoryRoutes } from "./memory-routes.ts";
import { readQuery } from "./query-params.ts";
import { revokeResponse } from "./revoke-response.ts";
import { rpcRoutes } from "./rpc/rpc-route.ts";
import { searchRoutes } from "./search-routes.ts";
import { declaredLength } from "./settle-unread-body.ts";
import { versionsRoutes } from "./versions-routes.ts";

/**
 * Routes under `/object/<token>`: HTTP in, a call on the cap's object, HTTP
 * out. Authority is decided in the object, never here.
 */
export const objectRoutes = new Hono<AppEnv>();

// A holder-bound cap's requests prove possession of its key before anything else (worker/holder-proof.ts).
objectRoutes.use("/:token", holderGate);
objectRoutes.use("/:token/*", holderGate);

// Each of these hands out cap URLs: minting a child, and RPC and MCP sessions (which mint and name URLs).
for (const route of ["/:token/subdir", "/:token/rpc", "/:token/mcp"]) objectRoutes.use(route, requirePublicOrigin);

type Handler = (cap: CapStub, c: Context<AppEnv>) => Promise<Response>;

/** Resolves the token; unknown and malformed tokens get the same `no_such_cap`. */
function withCap(handler: Handler) {
  return async (c: Context<AppEnv>) => {
    const cap = await capStub(c, c.req.param("token") ?? "");
    if (!cap.ok) return errorResponse(cap.error);
    return handler(cap.value, c);
  };
}

/** Refuses a request the worker itself finds malformed (framing, JSON, query encoding); see {@link problemFor}. */
async function problemResponse(cap: CapStub, problem: CapFailure): Promise<Response> {
  return errorResponse(await problemFor(cap, problem));
}

function json<T>(result: Result<T>, status: 200 | 201 = 200): Response {
  return result.ok ? jsonResponse(result.value, { status }) : errorResponse(result.error);
}

/** Runs `handler` with the strictly decoded query parameters it names. */
function withQuery<N extends string>(
  names: readonly N[],
  handler: (cap: CapStub, q: Record<N, string | null>, c: Context<AppEnv>) => Promise<Response>,
) {
  return withCap(async (cap, c) => {
    const q = readQuery(c.req.url, names);
    if (!q.ok) {
      await settleBody(c.req.raw.body, declaredLength(c.req.header("content-length")));
      return problemResponse(cap, q.error);
    }
    return handler(cap, q.value as Record<N, string | null>, c);
  });
}

/** Runs `handler` with the request's small JSON object body, holding only `fields`. */
function withJson(
  fields: readonly string[],
  handler: (cap: CapStub, body: Record<string, unknown>, c: Context<AppEnv>) => Promise<Response>,
) {
  return withCap(async (cap, c) => {
    // No body at all reads as `{}`: `POST /subdir` alone mints a same-root child.
    const raw = await readJsonBody(c.req.raw, SMALL_JSON_BYTES, { emptyAs: {} });
    const body = raw.ok ? jsonObject(raw.value, fields) : raw;
    if (!body.ok) return problemResponse(cap, body.error);
    return handler(cap, body.value, c);
  });
}

objectRoutes.get(
  "/:token",
  withCap(async (cap) => json(await cap.describe(true))),
);
objectRoutes.delete(
  "/:token",
  withCap(async (cap) => revokeResponse(await cap.revoke())),
);

objectRoutes.get(
  "/:token/file",
  withQuery(["path"], async (cap, q, c) => {
    const result = await readThroughCap(cap, c.env, q.path, {
      range: c.req.header("range") ?? null,
      ifNoneMatch: c.req.header("if-none-match") ?? null,
    });
    return result.ok ? fileResponse(result.value) : errorResponse(result.error);
  }),
);

objectRoutes.put(
  "/:token/file",
  withQuery(["path"], async (cap, q, c) => {
    const length = declaredLength(c.req.header("content-length"));
    // A body of unknown length is refused before it is streamed anywhere.
    if (length === null) {
      await settleBody(c.req.raw.body);
      return problemResponse(cap, refusal("lengthRequired"));
    }
    const body = c.req.raw.body ?? new Response("").body!;
    const result = await cap.writeFile(q.path, body, {
      length,
      contentType: c.req.header("content-type") ?? null,
      ifMatch: c.req.header("if-match"),
      ifNoneMatch: c.req.header("if-none-match"),
    });
    if (!result.ok) return errorResponse(result.error);
    const { created, size, etag, sha256 } = result.value;
    return jsonResponse({ size, etag, sha256 }, { status: created ? 201 : 200, headers: { ETag: `"${etag}"` } });
  }),
);

objectRoutes.delete(
  "/:token/file",
  withQuery(["path"], async (cap, q) => {
    const result = await cap.deleteFile(q.path);
    return result.ok ? new Response(null, { status: 204 }) : errorResponse(result.error);
  }),
);

// Folders: made (with any missing above) and removed while empty; both 204.
objectRoutes.put(
  "/:token/folder",
  withQuery(["path"], async (cap, q) => {
    const result = await cap.makeFolder(q.path);
    return result.ok ? new Response(null, { status: 204 }) : errorResponse(result.error);
  }),
);

objectRoutes.delete(
  "/:token/folder",
  withQuery(["path", "recursive"], async (cap, q) => {
    if (q.recursive !== null && q.recursive !== "true" && q.recursive !== "false")
      return problemResponse(cap, refusal("recursiveFlag"));
    // Recursive: everything below, bounded and entry by entry (worker/folder-ops.ts).
    if (q.recursive === "true") {
      const gone = await deleteFolderTree(cap, q.path);
      return gone.ok ? jsonResponse({ deleted: gone.value } satisfies FolderDeleted) : errorResponse(gone.error);
    }
    const result = await cap.removeFolder(q.path);
    return result.ok ? new Response(null, { status: 204 }) : errorResponse(result.error);
  }),
);

objectRoutes.get(
  "/:token/lines",
  withQuery(["path", "offset", "limit"], async (cap, q, c) => {
    const window = parseLineWindow(q.offset, q.limit);
    if (!window.ok) return problemResponse(cap, window.error);
    return json(await readLines(cap, c.env, q.path, window.value));
  }),
);

objectRoutes.get(
  "/:token/stat",
  withQuery(["path"], async (cap, q) => json(await cap.statPath(q.path))),
);

objectRoutes.get(
  "/:token/list",
  withQuery(["path", "cursor", "limit", "depth"], async (cap, q) =>
    json(await cap.listDir(q.path, q.cursor, q.limit, q.depth)),
  ),
);

objectRoutes.post(
  "/:token/move",
  withJson(["from", "to", "overwrite"], async (cap, body) => {
    const { from, to, overwrite = false } = body;
    if (typeof from !== "string" || typeof to !== "string" || typeof overwrite !== "boolean") {
      return problemResponse(cap, refusal("moveFields"));
    }
    const result = await cap.movePath(from, to, overwrite);
    // A folder's move is many file moves, bounded (worker/folder-ops.ts); a file's costs no extra call.
    if (isFolderMoveRefusal(result)) {
      const moved = await moveFolderTree(cap, from, to, overwrite);
      return moved.ok
        ? jsonResponse({ from, to, moved: moved.value } satisfies MoveResult)
        : errorResponse(moved.error);
    }
    return result.ok ? jsonResponse({ from, to } satisfies MoveResult) : errorResponse(result.error);
  }),
);

objectRoutes.post(
  "/:token/subdir",
  withJson(
    ["path", "rights", "ttlSeconds", "label", "maxBytes", "maxFiles", "history", "holder"],
    async (cap, body, c) => {
      const request = parseGrantRequest(body);
      if (!request.ok) return problemResponse(cap, request.error);
      return json(await cap.mintChild(request.value, publicOrigin(c)), 201);
    },
  ),
);

objectRoutes.get(
  "/:token/audit",
  withQuery(["limit"], async (cap, q) => json(await cap.auditTrail(q.limit))),
);

objectRoutes.get(
  "/:token/children",
  withQuery(["cursor", "limit"], async (cap, q) => json(await cap.listChildren(q.cursor, q.limit))),
);

objectRoutes.get(
  "/:token/tree",
  withCap(async (cap) => json(await cap.tree())),
);
objectRoutes.delete(
  "/:token/tree/:id",
  withCap(async (cap, c) => revokeResponse(await cap.revokeDescendant(c.req.param("id") ?? ""))),
);

objectRoutes.delete(
  "/:token/children/:id",
  withCap(async (cap, c) => revokeResponse(await cap.revokeChild(c.req.param("id") ?? ""))),
);

objectRoutes.route("/", memoryRoutes);
objectRoutes.route("/", versionsRoutes);
objectRoutes.route("/", searchRoutes);
objectRoutes.route("/", mcpRoutes);
objectRoutes.route("/", rpcRoutes);
