/**
 * WebDAV's reads: OPTIONS, GET and HEAD (the HTTP API's read, a folder as an
 * empty page) and PROPFIND at depth 0 or 1, listed a page at a time.
 */
import { refusal } from "../../shared/refusals.ts";
import { yieldTurn } from "../../shared/yield-turn.ts";
import { readThroughCap } from "../cap-read.ts";
import { fileResponse } from "../file-response.ts";
import {
  DAV_METHODS,
  DAV_PROPFIND_LIMIT,
  type DavRequest,
  davError,
  join,
  multistatus,
  readXml,
  statusLine,
} from "./dav-methods.ts";
import { type PropRequest, propResponse, resourceOf } from "./dav-props.ts";
import { davHref, parseDepth } from "./dav-request.ts";
import { childNamed, DAV_NS, DAV_XML_MAX_BYTES, DAV_XML_MAX_DEPTH, escapeXml } from "./dav-xml.ts";

/** Entries per PROPFIND listing call: a page is one synchronous step of the cap's object, so pages stay small. */
const DAV_PAGE = "250";

export async function davOptions(req: DavRequest): Promise<Response> {
  const live = await req.cap.describe();
  if (!live.ok) return davError(req, live.error);
  return new Response(null, {
    status: 200,
    headers: { DAV: "1, 2", Allow: DAV_METHODS, "MS-Author-Via": "DAV", "Content-Length": "0" },
  });
}

export async function davGet(req: DavRequest, head: boolean): Promise<Response> {
  const result = await readThroughCap(req.cap, req.c.env, req.path, {
    range: req.c.req.header("range") ?? null,
    ifNoneMatch: req.c.req.header("if-none-match") ?? null,
  });
  if (!result.ok) {
    // A folder has no bytes: answer as an empty page, so a browser or `curl` on a folder URL sees a folder.
    if (result.error.code === "not_found" || result.error.code === "invalid_path") {
      const stat = await req.cap.statPath(req.path);
      if (stat.ok && stat.value.type === "dir")
        return new Response(head ? null : "", { status: 200, headers: { "Content-Type": "text/plain" } });
    }
    return davError(req, result.error);
  }
  const response = fileResponse(result.value);
  if (!head) return response;
  await response.body?.cancel().catch(() => undefined);
  return new Response(null, { status: response.status, headers: response.headers });
}

export async function davPropfind(req: DavRequest): Promise<Response> {
  const depth = parseDepth(req.c.req.header("depth"), "infinity", ["0", "1", "infinity"]);
  if (!depth.ok) return davError(req, depth.error);
  if (depth.value === "infinity")
    return davError(
      req,
      refusal("davDepthInfinity"),
      403,
      `<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>`,
    );
  const body = await readXml(req);
  if (!body.ok) return davError(req, body.error);
  let want: PropRequest = { kind: "allprop" };
  if (body.value) {
    const root = body.value;
    const bad = () => davError(req, refusal("davXml", { limit: DAV_XML_MAX_BYTES, depth: DAV_XML_MAX_DEPTH }));
    if (root.ns !== DAV_NS || root.local !== "propfind") return bad();
    const prop = childNamed(root, "prop");
    if (prop) want = { kind: "prop", names: prop.children.map((p) => ({ ns: p.ns, local: p.local })) };
    else if (childNamed(root, "propname")) want = { kind: "propname" };
    else if (!childNamed(root, "allprop")) return bad();
  }
  const stat = await req.cap.statPath(req.path);
  if (!stat.ok) return davError(req, stat.error);
  const locks = await req.cap.davActiveLocks();
  if (!locks.ok) return davError(req, locks.error);
  const own = await req.cap.davGetProps([req.path]);
  if (!own.ok) return davError(req, own.error);
  const responses = [propResponse(req, resourceOf(req.path, stat.value), want, locks.value, own.value[0] ?? [])];
  if (depth.value === "1" && stat.value.type === "dir") {
    let cursor: string | null = null;
    let listed = 0;
    do {
      await yieldTurn();
      const page = await req.cap.listDir(req.path, cursor, DAV_PAGE, null);
      if (!page.ok) return davError(req, page.error);
      const paths = page.value.entries.map((entry) => join(req.path, entry.name));
      const dead = await req.cap.davGetProps(paths);
      if (!dead.ok) return davError(req, dead.error);
      for (const [i, entry] of page.value.entries.entries()) {
        // Building a thousand responses is tens of ms of string work: a turn every hundred.
        if (i % 100 === 99) await yieldTurn();
        responses.push(propResponse(req, resourceOf(paths[i]!, entry), want, locks.value, dead.value[i] ?? []));
      }
      listed += page.value.entries.length;
      cursor = page.value.cursor;
    } while (cursor !== null && listed < DAV_PROPFIND_LIMIT);
    if (cursor !== null) {
      const href = escapeXml(davHref(req.mount, req.path, true));
      responses.push(
        `<D:response><D:href>${href}</D:href>${statusLine(507)}<D:error><D:number-of-matches-within-limits/></D:error></D:response>`,
      );
    }
  }
  return multistatus(responses);
}
