import { Hono, type Context } from "hono";
import { parseGrantRequest } from "../shared/grant-request.ts";
import { failure, type Result } from "../shared/result.ts";
import type { RevokeOutcome } from "../durable-objects/cap-object.ts";
import { capStub, publicOrigin, type AppEnv } from "./cap-stub.ts";
import { fileResponse } from "./file-response.ts";
import { errorResponse } from "./http-error.ts";
import { readJson } from "./json-body.ts";
import { mcpRoutes } from "./mcp/mcp-route.ts";
import { memoryRoutes } from "./memory-routes.ts";

/**
 * Routes under `/object/<token>`: HTTP in, a call on the cap's object, HTTP
 * out. Authority is decided in the object, never here.
 */
export const objectRoutes = new Hono<AppEnv>();

type Handler = (cap: NonNullable<Awaited<ReturnType<typeof capStub>>>, c: Context<AppEnv>) => Promise<Response>;

/** Resolves the token; unknown and malformed tokens get the same `no_such_cap`. */
function withCap(handler: Handler) {
  return async (c: Context<AppEnv>) => {
    const cap = await capStub(c, c.req.param("token") ?? "");
    if (!cap) return errorResponse(failure("no_such_cap"));
    return handler(cap, c);
  };
}

function json<T>(result: Result<T>, status: 200 | 201 = 200): Response {
  return result.ok ? Response.json(result.value, { status }) : errorResponse(result.error);
}

function revoked(result: Result<RevokeOutcome>): Response {
  if (!result.ok) return errorResponse(result.error);
  // 202 says, truthfully, that some descendants are still being revoked (by alarms).
  if (result.value.pending > 0) return Response.json({ revoked: true, pendingDescendants: result.value.pending }, { status: 202 });
  return new Response(null, { status: 204 });
}

const query = (c: Context, name: string): string | null => c.req.query(name) ?? null;

objectRoutes.get("/:token", withCap(async (cap) => json(await cap.describe())));
objectRoutes.delete("/:token", withCap(async (cap) => revoked(await cap.revoke())));

objectRoutes.get("/:token/file", withCap(async (cap, c) => {
  const result = await cap.readFile(query(c, "path"), {
    range: c.req.header("range") ?? null,
    ifNoneMatch: c.req.header("if-none-match") ?? null,
  });
  return result.ok ? fileResponse(result.value) : errorResponse(result.error);
}));

objectRoutes.put("/:token/file", withCap(async (cap, c) => {
  const declared = c.req.header("content-length");
  const length = declared !== undefined && /^\d{1,16}$/.test(declared) ? Number(declared) : null;
  // Framing, not authority: a body of unknown length is refused for any
  // token alike, before it is streamed anywhere.
  if (length === null) {
    await c.req.raw.body?.cancel().catch(() => undefined);
    return errorResponse(failure("length_required"));
  }
  const body = c.req.raw.body ?? new Response("").body!;
  const result = await cap.writeFile(query(c, "path"), body, {
    length,
    contentType: c.req.header("content-type") ?? null,
    ifMatch: c.req.header("if-match"),
    ifNoneMatch: c.req.header("if-none-match"),
  });
  if (!result.ok) return errorResponse(result.error);
  const { created, size, etag } = result.value;
  return Response.json({ size, etag }, { status: created ? 201 : 200, headers: { ETag: `"${etag}"` } });
}));

objectRoutes.delete("/:token/file", withCap(async (cap, c) => {
  const result = await cap.deleteFile(query(c, "path"));
  return result.ok ? new Response(null, { status: 204 }) : errorResponse(result.error);
}));

objectRoutes.get("/:token/stat", withCap(async (cap, c) => json(await cap.statPath(query(c, "path")))));

objectRoutes.get("/:token/list", withCap(async (cap, c) =>
  json(await cap.listDir(query(c, "path"), query(c, "cursor"), query(c, "limit")))));

objectRoutes.post("/:token/move", withCap(async (cap, c) => {
  const body = await readJson(c);
  if (!body.ok) return errorResponse(body.error);
  const fields = body.value as Record<string, unknown>;
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) return errorResponse(failure("bad_request", "expected a JSON object"));
  const unknown = Object.keys(fields).find((k) => !["from", "to", "overwrite"].includes(k));
  if (unknown !== undefined) return errorResponse(failure("bad_request", `unknown field "${unknown.slice(0, 40)}"`));
  const { from, to, overwrite = false } = fields;
  if (typeof from !== "string" || typeof to !== "string" || typeof overwrite !== "boolean") {
    return errorResponse(failure("bad_request", "from and to must be strings, overwrite a boolean"));
  }
  const result = await cap.movePath(from, to, overwrite);
  return result.ok ? Response.json({ from, to }) : errorResponse(result.error);
}));

objectRoutes.post("/:token/subdir", withCap(async (cap, c) => {
  const body = await readJson(c);
  if (!body.ok) return errorResponse(body.error);
  const request = parseGrantRequest(body.value);
  if (!request.ok) return errorResponse(request.error);
  return json(await cap.mintChild(request.value, publicOrigin(c)), 201);
}));

objectRoutes.get("/:token/audit", withCap(async (cap, c) => json(await cap.auditTrail(query(c, "limit")))));

objectRoutes.get("/:token/children", withCap(async (cap) => json(await cap.listChildren())));

objectRoutes.delete("/:token/children/:id", withCap(async (cap, c) => revoked(await cap.revokeChild(c.req.param("id") ?? ""))));

objectRoutes.route("/", memoryRoutes);
objectRoutes.route("/", mcpRoutes);
