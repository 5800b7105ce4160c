import { type Context, Hono } from "hono";
import { refusal } from "../../shared/refusals.ts";
import { mayBeBound } from "../../shared/token.ts";
import { type AppEnv, type CapStub, capStub } from "../cap-stub.ts";
import { holderGate } from "../holder-proof.ts";
import { davCopyMove } from "./dav-copy-move.ts";
import { davLock, davUnlock } from "./dav-locking.ts";
import { basicChallenge, DAV_METHODS, type DavRequest, davError, davPath } from "./dav-methods.ts";
import { davProppatch } from "./dav-props.ts";
import { davGet, davOptions, davPropfind } from "./dav-read.ts";
import { davDelete, davMkcol, davPut } from "./dav-write.ts";

/**
 * WebDAV (RFC 4918, classes 1 and 2) over a cap, at `/object/<token>/dav/`
 * and, for mount dialogs that ask for a user and password and keep the URL
 * in their history, at a tokenless `/dav/` with the token as the password of
 * HTTP Basic. Every method is calls on the cap's object, so the chokepoint,
 * rights and path rules are the HTTP API's own; locks live in that object too.
 */
export const davRoutes = new Hono<AppEnv>();

davRoutes.use("/object/:token/dav", holderGate);
davRoutes.use("/object/:token/dav/*", holderGate);

async function serve(req: DavRequest): Promise<Response> {
  switch (req.c.req.method) {
    case "OPTIONS":
      return davOptions(req);
    case "GET":
      return davGet(req, false);
    case "HEAD":
      return davGet(req, true);
    case "PUT":
      return davPut(req);
    case "DELETE":
      return davDelete(req);
    case "MKCOL":
      return davMkcol(req);
    case "COPY":
      return davCopyMove(req, false);
    case "MOVE":
      return davCopyMove(req, true);
    case "PROPFIND":
      return davPropfind(req);
    case "PROPPATCH":
      return davProppatch(req);
    case "LOCK":
      return davLock(req);
    case "UNLOCK":
      return davUnlock(req);
    default:
      return davError(req, refusal("davMethod"));
  }
}

function request(c: Context<AppEnv>, cap: CapStub, mount: string, basic: boolean): Promise<Response> | Response {
  const pathname = new URL(c.req.url).pathname;
  const at = davPath(pathname.slice(mount.length));
  const req: DavRequest = { cap, c, mount, basic, path: "", collection: true };
  if (!at.ok) return davError(req, at.error);
  return serve({ ...req, ...at.value });
}

const byUrl = async (c: Context<AppEnv>) => {
  const cap = await capStub(c, c.req.param("token") ?? "");
  if (!cap.ok) return davError({ basic: false }, cap.error);
  const mount = /^\/object\/[^/]+\/dav/.exec(new URL(c.req.url).pathname)?.[0] ?? "";
  return request(c, cap.value, mount, false);
};

/** The cap token from `Authorization: Basic`, the user name ignored; `null` when absent or malformed. */
function basicPassword(header: string | undefined): string | null {
  const m = /^Basic\s+([A-Za-z0-9+/]+=*)\s*$/i.exec(header ?? "");
  if (!m) return null;
  let decoded: string;
  try {
    decoded = atob(m[1]!);
  } catch {
    return null;
  }
  const colon = decoded.indexOf(":");
  return colon === -1 ? null : decoded.slice(colon + 1);
}

const byBasic = async (c: Context<AppEnv>) => {
  const token = basicPassword(c.req.header("authorization"));
  const cap = token === null ? null : await capStub(c, token);
  // A format-0 token as the password gets its own answer (davError challenges only for no_such_cap).
  if (cap === null || token === null) return basicChallenge();
  if (!cap.ok) return davError({ basic: true }, cap.error);
  // A holder-bound cap needs its proof, which a mount dialog cannot make: it reads as unknown here.
  if (mayBeBound(token) && !(await cap.value.admitHolder({ kind: "unproved" }, Date.now())).ok) return basicChallenge();
  return request(c, cap.value, "/dav", true);
};

davRoutes.all("/object/:token/dav", byUrl);
davRoutes.all("/object/:token/dav/*", byUrl);
davRoutes.all("/dav", byBasic);
davRoutes.all("/dav/*", byBasic);

export { DAV_METHODS };
