/**
 * What every WebDAV method shares: the request once its cap is known, its
 * bounds, refusals as WebDAV statuses, multistatus answers, the XML body
 * and the parent check. The methods: dav-read (OPTIONS, GET, HEAD, PROPFIND),
 * dav-write (PUT, DELETE, MKCOL), dav-copy-move, dav-props (PROPPATCH),
 * dav-locking (LOCK, UNLOCK, and the lock gate every change passes).
 */
import type { Context } from "hono";
import { type Reason, refusal, refuse } from "../../shared/refusals.ts";
import { type CapFailure, ok, type Result } from "../../shared/result.ts";
import type { AppEnv, CapStub } from "../cap-stub.ts";
import { errorResponse } from "../http-error.ts";
import { readTextBody } from "../json-body.ts";
import { davPath } from "./dav-request.ts";
import { DAV_XML_MAX_BYTES, DAV_XML_MAX_DEPTH, parseXml, type XmlElement } from "./dav-xml.ts";

/** A folder deleted, copied or moved through WebDAV holds at most this many entries (files and folders), in all. */
export const DAV_TREE_LIMIT = 1000;
/** A Depth 1 PROPFIND lists at most this many children; past it the answer says so (507 for the folder). */
export const DAV_PROPFIND_LIMIT = 10_000;

export const DAV_METHODS = "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK";

/** One WebDAV request, once its cap is known: where it is mounted and which path it names. */
export interface DavRequest {
  cap: CapStub;
  c: Context<AppEnv>;
  /** `/object/<token>/dav` or `/dav`, exactly as the request spelled it: hrefs go under the request's own path. */
  mount: string;
  /** Credentials came as HTTP Basic: an unknown or dead cap then answers 401 with a challenge. */
  basic: boolean;
  path: string;
  collection: boolean;
}

/** Statuses of WebDAV's own for some refusals; every other refusal keeps its code's status (worker/http-error.ts). */
const DAV_STATUS: [Reason, number][] = [
  ["davLocked", 423],
  ["davExists", 405],
  ["davMkcolBody", 415],
  ["davMethod", 405],
];

export function basicChallenge(): Response {
  const response = errorResponse(refusal("davBasicRequired"));
  response.headers.set("WWW-Authenticate", 'Basic realm="capvault"');
  return response;
}

export function davError(req: Pick<DavRequest, "basic">, failure: CapFailure, status?: number, xml?: string): Response {
  // Over Basic, an unknown, revoked or expired cap looks like no credentials at all.
  if (req.basic && failure.code === "no_such_cap") return basicChallenge();
  const special = DAV_STATUS.find(([reason]) => refusal(reason as never).message === failure.message);
  const response = errorResponse(failure);
  const code = status ?? special?.[1];
  const headers = new Headers(response.headers);
  if (code === 405) headers.set("Allow", DAV_METHODS);
  if (xml !== undefined) {
    headers.set("Content-Type", "application/xml; charset=utf-8");
    return new Response(`<?xml version="1.0" encoding="utf-8"?>\n${xml}`, { status: code ?? response.status, headers });
  }
  return code === undefined ? response : new Response(response.body, { status: code, headers });
}

export function multistatus(responses: string[], status = 207, headers: HeadersInit = {}): Response {
  const body = `<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">${responses.join("")}</D:multistatus>`;
  const h = new Headers(headers);
  h.set("Content-Type", "application/xml; charset=utf-8");
  return new Response(body, { status, headers: h });
}

const STATUS_TEXT: Record<number, string> = {
  200: "OK",
  403: "Forbidden",
  404: "Not Found",
  424: "Failed Dependency",
  507: "Insufficient Storage",
};
export const statusLine = (code: number) => `<D:status>HTTP/1.1 ${code} ${STATUS_TEXT[code] ?? ""}</D:status>`;

export async function readXml(req: DavRequest): Promise<Result<XmlElement | null>> {
  const text = await readTextBody(req.c.req.raw, DAV_XML_MAX_BYTES);
  if (!text.ok) return text;
  const bad = refuse("davXml", { limit: DAV_XML_MAX_BYTES, depth: DAV_XML_MAX_DEPTH });
  if (text.value === null) return bad;
  if (text.value.trim() === "") return ok(null);
  const root = parseXml(text.value);
  return root ? ok(root) : bad;
}

const parentOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");
export const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

/** A write's target must sit in an existing folder (RFC 4918 §9.7.1, §9.3.1): 409 otherwise. */
export async function parentExists(req: DavRequest, path: string): Promise<Result<null>> {
  const parent = parentOf(path);
  if (parent === "" && path !== "") return ok(null);
  const stat = await req.cap.statPath(parent);
  if (stat.ok) return stat.value.type === "dir" ? ok(null) : refuse("davNoParent");
  if (stat.error.code === "not_found") return refuse("davNoParent");
  // A cap that may write but not look (write-only) cannot tell: the write itself decides.
  return stat.error.code === "forbidden" ? ok(null) : stat;
}

export { davPath };
