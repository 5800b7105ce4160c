import { type Context, Hono } from "hono";
import { settleBody } from "../shared/settle-body.ts";
import { type AppEnv, type CapStub, capStub, problemFor } from "./cap-stub.ts";
import { errorResponse } from "./http-error.ts";
import { jsonResponse } from "./json-response.ts";
import { readQuery } from "./query-params.ts";
import { declaredLength } from "./settle-unread-body.ts";
import { watchSocket } from "./watch-socket.ts";

/**
 * Version history under `/object/<token>/versions`: a file's versions, one
 * version's bytes, restore and redact. Routing only: the cap's object admits
 * each request (rights, its scope) and its root's journal answers it.
 */
export const versionsRoutes = new Hono<AppEnv>();

/** Resolves the token and reads the query; unknown and malformed tokens get the same `no_such_cap`. */
function withCap(handler: (cap: CapStub, c: Context<AppEnv>) => Promise<Response>) {
  return async (c: Context<AppEnv>) => {
    const cap = await capStub(c, c.req.param("token") ?? "");
    // Restore and redact take no body: whatever came is read and dropped, so the answer is never cut.
    await settleBody(c.req.raw.body, declaredLength(c.req.header("content-length")));
    if (!cap.ok) return errorResponse(cap.error);
    return handler(cap.value, c);
  };
}

versionsRoutes.get(
  "/:token/versions",
  withCap(async (cap, c) => {
    const q = readQuery(c.req.url, ["path", "cursor", "limit"]);
    if (!q.ok) return errorResponse(await problemFor(cap, q.error));
    const page = await cap.listVersions(q.value.path ?? null, q.value.cursor ?? null, q.value.limit ?? null);
    return page.ok ? jsonResponse(page.value) : errorResponse(page.error);
  }),
);

versionsRoutes.get(
  "/:token/versions/:id",
  withCap(async (cap, c) => {
    const found = await cap.readVersion(c.req.param("id") ?? "");
    if (!found.ok) return errorResponse(found.error);
    const { size, contentType, body } = found.value;
    // Bytes as stored, never recompressed, never cached (see worker/file-response.ts).
    const fixed = new FixedLengthStream(size);
    body.pipeTo(fixed.writable).catch(() => undefined);
    return new Response(fixed.readable, {
      headers: {
        "Content-Type": contentType,
        "Content-Length": String(size),
        "Content-Encoding": "identity",
        "Cache-Control": "no-store, no-transform",
      },
    });
  }),
);

versionsRoutes.post(
  "/:token/versions/:id/restore",
  withCap(async (cap, c) => {
    const written = await cap.restoreVersion(c.req.param("id") ?? "");
    if (!written.ok) return errorResponse(written.error);
    // The cap-relative path the bytes went back to: the caller named only a version id.
    const { path, size, etag, sha256 } = written.value;
    return jsonResponse({ path, size, etag, sha256 }, { headers: { ETag: `"${etag}"` } });
  }),
);

versionsRoutes.post(
  "/:token/versions/:id/redact",
  withCap(async (cap, c) => {
    const redacted = await cap.redactVersion(c.req.param("id") ?? "");
    return redacted.ok ? new Response(null, { status: 204 }) : errorResponse(redacted.error);
  }),
);

/**
 * `GET /watch?since=<versionId>`: server-sent events, one per change inside
 * the cap's subtree (`{ path, operation, size, sha256, actor, version }`),
 * after `since` (or `Last-Event-ID`) first, then live; closed when the cap is
 * revoked or expires. An `event: resume` names where to reconnect from. With
 * `Upgrade: websocket`, the same events as WebSocket messages (watch-socket.ts).
 */
versionsRoutes.get(
  "/:token/watch",
  withCap(async (cap, c) => {
    const q = readQuery(c.req.url, ["since"]);
    if (!q.ok) return errorResponse(await problemFor(cap, q.error));
    const since = q.value.since ?? c.req.header("last-event-id") ?? null;
    if (c.req.header("upgrade")?.toLowerCase() === "websocket") return watchSocket(c.env, cap, since);
    const feed = await cap.watch(since);
    if (!feed.ok) return errorResponse(feed.error);
    return new Response(feed.value, {
      headers: {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-store, no-transform",
        "Content-Encoding": "identity",
      },
    });
  }),
);
