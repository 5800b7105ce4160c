import type { Context } from "hono";
import type { DavLock } from "../../durable-objects/cap-dav-locks.ts";
import { lockCovers, MAX_LOCK_SECONDS, pathWithin } from "../../durable-objects/cap-dav-locks.ts";
import {
  type DeadProp,
  MAX_DAV_PROP_CAP_BYTES,
  MAX_DAV_PROP_RESOURCES,
  MAX_DAV_PROP_VALUE_BYTES,
  MAX_DAV_PROPS_PER_RESOURCE,
  type PropOp,
} from "../../durable-objects/cap-dav-props.ts";
import { bareEtag } from "../../shared/http-conditions.ts";
import { type Reason, refusal, refuse } from "../../shared/refusals.ts";
import { type CapFailure, ok, type Result } from "../../shared/result.ts";
import type { ListEntry, Stat } from "../../shared/wire-types.ts";
import { yieldTurn } from "../../shared/yield-turn.ts";
import { readThroughCap } from "../cap-read.ts";
import type { AppEnv, CapStub } from "../cap-stub.ts";
import { fileResponse } from "../file-response.ts";
import { removeTree, type TreeBound, transferTree, walkTree } from "../folder-tree.ts";
import { errorResponse } from "../http-error.ts";
import { readTextBody } from "../json-body.ts";
import { declaredLength } from "../settle-unread-body.ts";
import {
  davHref,
  davPath,
  destinationPath,
  type IfList,
  parseDepth,
  parseIf,
  parseOverwrite,
  parseTimeout,
} from "./dav-request.ts";
import {
  childNamed,
  childrenNamed,
  DAV_NS,
  DAV_XML_MAX_BYTES,
  DAV_XML_MAX_DEPTH,
  emptyElement,
  escapeXml,
  innerXml,
  parseXml,
  propElement,
  serializeElement,
  type XmlElement,
  xmlSafe,
} from "./dav-xml.ts";

/** A folder deleted, copied or moved through WebDAV holds at most this many entries (files and folders), in all. */
export const DAV_TREE_LIMIT = 1000;
/** A Depth 1 PROPFIND lists at most this many children; past it the answer says so (507 for the folder). */
export const DAV_PROPFIND_LIMIT = 10_000;
const DEFAULT_LOCK_SECONDS = 600;

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

function multistatus(responses: string[], status = 207, headers: HeadersInit = {}): Response {
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
const statusLine = (code: number) => `<D:status>HTTP/1.1 ${code} ${STATUS_TEXT[code] ?? ""}</D:status>`;

async function readXml(req: DavRequest): Promise<Result<XmlElement | null>> {
  const text = await readTextBody(req.c.req.raw, DAV_XML_MAX_BYTES);
  if (!text.ok) return text;
  const bad = refuse("davXml", { limit: DAV_XML_MAX_BYTES, depth: DAV_XML_MAX_DEPTH });
  if (text.value === null) return bad;
  if (text.value.trim() === "") return ok(null);
  const root = parseXml(text.value);
  return root ? ok(root) : bad;
}

const parentOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");
const join = (dir: string, name: string) => (dir === "" ? name : `${dir}/${name}`);

/** A write's target must sit in an existing folder (RFC 4918 §9.7.1, §9.3.1): 409 otherwise. */
async function parentExists(req: DavRequest, path: string): Promise<Result<null>> {
  const parent = parentOf(path);
  if (parent === "" && path !== "") return ok(null);
  const stat = await req.cap.statPath(parent);
  if (stat.ok) return stat.value.type === "dir" ? ok(null) : refuse("davNoParent");
  if (stat.error.code === "not_found") return refuse("davNoParent");
  // A cap that may write but not look (write-only) cannot tell: the write itself decides.
  return stat.error.code === "forbidden" ? ok(null) : stat;
}

// ---- locks and the If header ------------------------------------------------

/**
 * The lock and If checks of a write (RFC 4918 §6, §10.4): every live lock
 * on a path it changes (`targets`) or below a folder it changes whole
 * (`subtrees`) must have its token submitted (else 423), once the If header
 * holds (else 412). `null` when the write may go ahead.
 */
async function lockGate(req: DavRequest, targets: string[], subtrees: string[]): Promise<Response | null> {
  const header = req.c.req.header("if");
  const origin = req.c.env.CAPVAULT_PUBLIC_URL?.replace(/\/+$/, "") ?? null;
  const lists = header === undefined ? [] : parseIf(header, req.c.req.url, req.mount, origin);
  if (lists === null) return davError(req, refusal("badRequest"));
  const active = await req.cap.davActiveLocks();
  if (!active.ok) return davError(req, active.error);
  // The If header is judged first (412), then the locks it did not unlock (423): RFC 4918 §10.4.1.
  if (lists.length > 0 && !(await ifHolds(req, lists, active.value)))
    return davError(req, refusal("preconditionFailed"));
  const submitted = new Set(lists.flatMap((l) => l.conditions.filter((c) => c.kind === "token").map((c) => c.value)));
  const blocking = active.value.find(
    (lock) =>
      !submitted.has(lock.token) &&
      (targets.some((t) => lockCovers(lock, t)) || subtrees.some((s) => pathWithin(lock.path, s))),
  );
  if (blocking) {
    const href = escapeXml(davHref(req.mount, blocking.path, false));
    return davError(
      req,
      refusal("davLocked"),
      423,
      `<D:error xmlns:D="DAV:"><D:lock-token-submitted><D:href>${href}</D:href></D:lock-token-submitted></D:error>`,
    );
  }
  return null;
}

async function ifHolds(req: DavRequest, lists: IfList[], locks: DavLock[]): Promise<boolean> {
  const etags = new Map<string, string | null>();
  const etagOf = async (path: string) => {
    if (!etags.has(path)) {
      const stat = await req.cap.statPath(path);
      etags.set(path, stat.ok && stat.value.type === "file" ? (stat.value.etag ?? null) : null);
    }
    return etags.get(path) ?? null;
  };
  for (const list of lists) {
    const resource = list.resource ?? req.path;
    let holds = true;
    for (const cond of list.conditions) {
      const met =
        cond.kind === "token"
          ? locks.some((l) => l.token === cond.value && lockCovers(l, resource))
          : (await etagOf(resource)) === bareEtag(cond.value);
      if (met === cond.not) {
        holds = false;
        break;
      }
    }
    if (holds) return true;
  }
  return false;
}

// ---- bounded tree walks (worker/folder-tree.ts) ------------------------------

/** Entries per PROPFIND listing call: a page is one synchronous step of the cap's object, so pages stay small. */
const DAV_PAGE = "250";

const DAV_BOUND: TreeBound = { limit: DAV_TREE_LIMIT, tooLarge: refusal("davTreeTooLarge", { limit: DAV_TREE_LIMIT }) };

/** Deletes a folder and everything below it, bounded by {@link DAV_BOUND}; the cap's root itself is never removed. */
async function removeDavTree(req: DavRequest, root: string): Promise<Result<null>> {
  const tree = await walkTree(req.cap, root, DAV_BOUND);
  if (!tree.ok) return tree;
  const gone = await removeTree(req.cap, tree.value);
  return gone.ok ? ok(null) : gone;
}

async function copyFile(req: DavRequest, from: string, to: string): Promise<Result<null>> {
  const read = await readThroughCap(req.cap, req.c.env, from, {});
  if (!read.ok) return read;
  if (read.value.status !== "body") return refuse("unavailable");
  const { meta, body } = read.value;
  const written = await req.cap.writeFile(to, body, { length: meta.size, contentType: meta.contentType });
  return written.ok ? ok(null) : written;
}

// ---- the methods ------------------------------------------------------------

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

export async function davPut(req: DavRequest): Promise<Response> {
  const c = req.c;
  // Finder sends its bodies chunked, naming their length in X-Expected-Entity-Length.
  const length =
    declaredLength(c.req.header("content-length")) ?? declaredLength(c.req.header("x-expected-entity-length"));
  if (length === null) return davError(req, refusal("lengthRequired"));
  if (req.path === "" || req.collection) return davError(req, refusal("needsFileName"));
  const parent = await parentExists(req, req.path);
  if (!parent.ok) return davError(req, parent.error);
  const gate = await lockGate(req, [req.path], []);
  if (gate) return gate;
  const result = await req.cap.writeFile(req.path, c.req.raw.body ?? new Response("").body!, {
    length,
    contentType: c.req.header("content-type") ?? null,
    ifMatch: c.req.header("if-match"),
    ifNoneMatch: c.req.header("if-none-match"),
  });
  if (!result.ok) return davError(req, result.error);
  return new Response(null, { status: result.value.created ? 201 : 204, headers: { ETag: `"${result.value.etag}"` } });
}

export async function davDelete(req: DavRequest): Promise<Response> {
  if (req.path === "") return davError(req, refusal("davSameResource"), 403);
  const stat = await req.cap.statPath(req.path);
  if (!stat.ok) return davError(req, stat.error);
  const isDir = stat.value.type === "dir";
  const gate = await lockGate(req, [req.path], isDir ? [req.path] : []);
  if (gate) return gate;
  const gone = isDir ? await removeDavTree(req, req.path) : await req.cap.deleteFile(req.path);
  if (!gone.ok) return davError(req, gone.error);
  await req.cap.davDropLocks(req.path);
  await req.cap.davDropProps(req.path);
  return new Response(null, { status: 204 });
}

export async function davMkcol(req: DavRequest): Promise<Response> {
  const c = req.c;
  const length = declaredLength(c.req.header("content-length"));
  if ((length !== null && length > 0) || c.req.header("transfer-encoding") !== undefined)
    return davError(req, refusal("davMkcolBody"));
  if (req.path === "") return davError(req, refusal("davExists"));
  const stat = await req.cap.statPath(req.path);
  if (stat.ok) return davError(req, refusal("davExists"));
  if (stat.error.code !== "not_found" && stat.error.code !== "forbidden") return davError(req, stat.error);
  const parent = await parentExists(req, req.path);
  if (!parent.ok) return davError(req, parent.error);
  const gate = await lockGate(req, [req.path], []);
  if (gate) return gate;
  const made = await req.cap.makeFolder(req.path);
  return made.ok ? new Response(null, { status: 201 }) : davError(req, made.error);
}

export async function davCopyMove(req: DavRequest, move: boolean): Promise<Response> {
  const c = req.c;
  const origin = c.env.CAPVAULT_PUBLIC_URL?.replace(/\/+$/, "") ?? null;
  const dest = destinationPath(c.req.header("destination"), c.req.url, req.mount, origin);
  if (!dest.ok) return davError(req, dest.error);
  const overwrite = parseOverwrite(c.req.header("overwrite"));
  if (!overwrite.ok) return davError(req, overwrite.error);
  const to = dest.value.path;
  const from = req.path;
  if (from === "" || to === "" || pathWithin(to, from)) return davError(req, refusal("davSameResource"));
  // Overwriting a folder the source lies in would delete the source before it is copied: refused, nothing touched.
  if (pathWithin(from, to)) return davError(req, refusal("davDestinationHoldsSource"));
  const src = await req.cap.statPath(from);
  if (!src.ok) return davError(req, src.error);
  const isDir = src.value.type === "dir";
  const depth = parseDepth(c.req.header("depth"), "infinity", move && isDir ? ["infinity"] : ["0", "infinity"]);
  if (!depth.ok) return davError(req, depth.error);
  const parent = await parentExists(req, to);
  if (!parent.ok) return davError(req, parent.error);
  const existing = await req.cap.statPath(to);
  if (!existing.ok && existing.error.code !== "not_found") return davError(req, existing.error);
  const existed = existing.ok;
  if (existed && !overwrite.value) return davError(req, refusal("destinationExists"), 412);
  const gate = await lockGate(req, move ? [from, to] : [to], move ? [from, to] : [to]);
  if (gate) return gate;
  if (existed) {
    const cleared = existing.value.type === "dir" ? await removeDavTree(req, to) : await req.cap.deleteFile(to);
    if (!cleared.ok) return davError(req, cleared.error);
    await req.cap.davDropLocks(to);
    await req.cap.davDropProps(to);
  }
  // Dead properties go with the resource (RFC 4918 §9.8.2, §9.9.1); a copy past the cap's bounds is refused before any file.
  const props = move ? ok(null) : await req.cap.davCarryProps(from, to, false, depth.value !== "0");
  // Past the cap's bounds of dead properties (its only too_large): 507 Insufficient Storage, RFC 4918 §11.5.
  if (!props.ok) return davError(req, props.error, props.error.code === "too_large" ? 507 : undefined);
  const done = isDir ? await copyTree(req, from, to, move, depth.value === "0") : await copyOne(req, from, to, move);
  if (!done.ok) {
    if (!move) await req.cap.davDropProps(to);
    return davError(req, done.error);
  }
  if (move) {
    await req.cap.davDropLocks(from);
    await req.cap.davCarryProps(from, to, true, true);
  }
  return new Response(null, { status: existed ? 204 : 201 });
}

async function copyOne(req: DavRequest, from: string, to: string, move: boolean): Promise<Result<null>> {
  return move ? req.cap.movePath(from, to, true) : copyFile(req, from, to);
}

/** A folder copied or moved entry by entry, bounded by {@link DAV_BOUND}: not atomic, and said so in the docs. */
async function copyTree(
  req: DavRequest,
  from: string,
  to: string,
  move: boolean,
  shallow: boolean,
): Promise<Result<null>> {
  if (shallow) return req.cap.makeFolder(to);
  const tree = await walkTree(req.cap, from, DAV_BOUND);
  if (!tree.ok) return tree;
  const done = await transferTree(req.cap, tree.value, from, to, move, (source, destination) =>
    copyOne(req, source, destination, move),
  );
  return done.ok ? ok(null) : done;
}

// ---- properties -------------------------------------------------------------

type PropName = { ns: string; local: string };

const LIVE_PROPS = [
  "resourcetype",
  "getcontentlength",
  "getetag",
  "getlastmodified",
  "getcontenttype",
  "supportedlock",
  "lockdiscovery",
] as const;

interface Resource {
  path: string;
  type: "file" | "dir";
  size?: number | undefined;
  etag?: string | undefined;
  modified?: string | undefined;
  contentType?: string | undefined;
}

function activeLockXml(req: DavRequest, lock: DavLock): string {
  const left = Math.max(0, Math.ceil((lock.expiresAt - Date.now()) / 1000));
  return (
    `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${lock.scope}/></D:lockscope>` +
    `<D:depth>${lock.depth === "0" ? "0" : "infinity"}</D:depth>${lock.owner}` +
    `<D:timeout>Second-${left}</D:timeout><D:locktoken><D:href>${escapeXml(lock.token)}</D:href></D:locktoken>` +
    `<D:lockroot><D:href>${escapeXml(davHref(req.mount, lock.path, false))}</D:href></D:lockroot></D:activelock>`
  );
}

function liveProp(req: DavRequest, r: Resource, local: string, locks: DavLock[]): string | null {
  const tag = (value: string) => `<D:${local}>${value}</D:${local}>`;
  switch (local) {
    case "resourcetype":
      return tag(r.type === "dir" ? "<D:collection/>" : "");
    case "getcontentlength":
      return r.type === "file" && r.size !== undefined ? tag(String(r.size)) : null;
    case "getetag":
      return r.etag ? tag(escapeXml(`"${r.etag}"`)) : null;
    case "getlastmodified":
      return r.modified ? tag(new Date(r.modified).toUTCString()) : null;
    case "getcontenttype":
      return r.contentType ? tag(escapeXml(r.contentType)) : null;
    case "supportedlock":
      return tag(
        ["exclusive", "shared"]
          .map(
            (s) => `<D:lockentry><D:lockscope><D:${s}/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>`,
          )
          .join(""),
      );
    case "lockdiscovery":
      return tag(
        locks
          .filter((l) => lockCovers(l, r.path))
          .map((l) => activeLockXml(req, l))
          .join(""),
      );
    default:
      return null;
  }
}

type PropRequest = { kind: "allprop" } | { kind: "propname" } | { kind: "prop"; names: PropName[] };

const isLive = (ns: string, local: string) => ns === DAV_NS && (LIVE_PROPS as readonly string[]).includes(local);

function propResponse(req: DavRequest, r: Resource, want: PropRequest, locks: DavLock[], dead: DeadProp[]): string {
  const href = `<D:href>${escapeXml(davHref(req.mount, r.path, r.type === "dir"))}</D:href>`;
  const found: string[] = [];
  const missing: string[] = [];
  if (want.kind === "propname") {
    for (const local of LIVE_PROPS) if (liveProp(req, r, local, locks) !== null) found.push(`<D:${local}/>`);
    for (const p of dead) found.push(emptyElement(p.ns, p.name));
  } else if (want.kind === "allprop") {
    for (const local of LIVE_PROPS) {
      const value = liveProp(req, r, local, locks);
      if (value !== null) found.push(value);
    }
    for (const p of dead) found.push(propElement(p.ns, p.name, p.xml));
  } else {
    for (const name of want.names) {
      const live = isLive(name.ns, name.local) ? liveProp(req, r, name.local, locks) : null;
      const kept = live === null ? dead.find((p) => p.ns === name.ns && p.name === name.local) : undefined;
      if (live !== null) found.push(live);
      else if (kept) found.push(propElement(kept.ns, kept.name, kept.xml));
      else missing.push(emptyElement(name.ns, name.local));
    }
  }
  const propstat = (props: string[], code: number) =>
    props.length === 0 ? "" : `<D:propstat><D:prop>${props.join("")}</D:prop>${statusLine(code)}</D:propstat>`;
  return `<D:response>${href}${propstat(found, 200)}${propstat(missing, 404)}</D:response>`;
}

function resourceOf(path: string, stat: Stat | ListEntry): Resource {
  if (stat.type === "dir") return { path, type: "dir" };
  return {
    path,
    type: "file",
    size: stat.size,
    etag: stat.etag,
    modified: stat.modified,
    contentType: "contentType" in stat ? stat.contentType : undefined,
  };
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

/** A PROPPATCH's operations in document order (RFC 4918 §9.2), or `null` when the body is not one. */
function patchOps(root: XmlElement | null): PropOp[] | null {
  if (!root || root.ns !== DAV_NS || root.local !== "propertyupdate") return null;
  const ops: PropOp[] = [];
  for (const op of root.children) {
    if (op.ns !== DAV_NS || (op.local !== "set" && op.local !== "remove")) return null;
    for (const prop of childrenNamed(op, "prop"))
      for (const p of prop.children) {
        if (op.local === "remove") ops.push({ op: "remove", ns: p.ns, name: p.local });
        else if (!xmlSafe(p)) return null;
        else ops.push({ op: "set", ns: p.ns, name: p.local, xml: innerXml(p) });
      }
  }
  return ops.length > 0 ? ops : null;
}

export async function davProppatch(req: DavRequest): Promise<Response> {
  const body = await readXml(req);
  if (!body.ok) return davError(req, body.error);
  const ops = patchOps(body.value);
  if (!ops) return davError(req, refusal("davXml", { limit: DAV_XML_MAX_BYTES, depth: DAV_XML_MAX_DEPTH }));
  const stat = await req.cap.statPath(req.path);
  if (!stat.ok) return davError(req, stat.error);
  const gate = await lockGate(req, [req.path], []);
  if (gate) return gate;
  // Each op's status: all 200 once applied; else the ones that failed theirs, and 424 for the rest (nothing changed).
  const statuses = ops.map(() => 200);
  let description: string | null = null;
  const protectedOps = ops.flatMap((op, i) => (isLive(op.ns, op.name) ? [i] : []));
  if (protectedOps.length > 0) {
    statuses.fill(424);
    for (const i of protectedOps) statuses[i] = 403;
    description = refusal("davProtectedProperty").message;
  } else {
    const patched = await req.cap.davPatchProps(req.path, ops);
    if (!patched.ok) return davError(req, patched.error);
    if (!patched.value.applied) {
      statuses.fill(424);
      for (const i of patched.value.failing) statuses[i] = 507;
      description = patched.value.full
        ? refusal("davPropsFull", { resources: MAX_DAV_PROP_RESOURCES, bytes: MAX_DAV_PROP_CAP_BYTES }).message
        : refusal("davPropsBound", { props: MAX_DAV_PROPS_PER_RESOURCE, value: MAX_DAV_PROP_VALUE_BYTES }).message;
    }
  }
  const groups = new Map<number, Set<string>>();
  for (const [i, op] of ops.entries()) {
    const names = groups.get(statuses[i]!) ?? new Set<string>();
    names.add(emptyElement(op.ns, op.name));
    groups.set(statuses[i]!, names);
  }
  const href = escapeXml(davHref(req.mount, req.path, stat.value.type === "dir"));
  const propstats = [...groups]
    .map(([code, names]) => `<D:propstat><D:prop>${[...names].join("")}</D:prop>${statusLine(code)}</D:propstat>`)
    .join("");
  const text = description === null ? "" : `<D:responsedescription>${escapeXml(description)}</D:responsedescription>`;
  return multistatus([`<D:response><D:href>${href}</D:href>${propstats}${text}</D:response>`]);
}

// ---- locks ------------------------------------------------------------------

function lockAnswer(req: DavRequest, lock: DavLock, status: number): Response {
  const body = `<?xml version="1.0" encoding="utf-8"?>\n<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLockXml(req, lock)}</D:lockdiscovery></D:prop>`;
  return new Response(body, {
    status,
    headers: { "Content-Type": "application/xml; charset=utf-8", "Lock-Token": `<${lock.token}>` },
  });
}

export async function davLock(req: DavRequest): Promise<Response> {
  const c = req.c;
  const seconds = parseTimeout(c.req.header("timeout"), DEFAULT_LOCK_SECONDS, MAX_LOCK_SECONDS);
  const body = await readXml(req);
  if (!body.ok) return davError(req, body.error);
  if (!body.value) {
    // A refresh: the lock's token in the If header (RFC 4918 §9.10.2).
    const origin = c.env.CAPVAULT_PUBLIC_URL?.replace(/\/+$/, "") ?? null;
    const lists = parseIf(c.req.header("if") ?? "", c.req.url, req.mount, origin);
    const token = lists?.flatMap((l) => l.conditions).find((x) => x.kind === "token" && !x.not)?.value;
    if (!token) return davError(req, refusal("badRequest"));
    const refreshed = await req.cap.davRefreshLock(req.path, token, seconds);
    if (!refreshed.ok) return davError(req, refreshed.error, refreshed.error.code === "conflict" ? 412 : undefined);
    return lockAnswer(req, refreshed.value, 200);
  }
  const info = body.value;
  const bad = () => davError(req, refusal("davXml", { limit: DAV_XML_MAX_BYTES, depth: DAV_XML_MAX_DEPTH }));
  if (info.ns !== DAV_NS || info.local !== "lockinfo") return bad();
  const scopeEl = childNamed(info, "lockscope");
  const scope =
    scopeEl && childNamed(scopeEl, "shared")
      ? "shared"
      : scopeEl && childNamed(scopeEl, "exclusive")
        ? "exclusive"
        : null;
  const typeEl = childNamed(info, "locktype");
  if (!scope || !typeEl || !childNamed(typeEl, "write")) return bad();
  const ownerEl = childNamed(info, "owner");
  const depth = parseDepth(c.req.header("depth"), "infinity", ["0", "infinity"]);
  if (!depth.ok) return davError(req, depth.error);
  const stat = await req.cap.statPath(req.path);
  if (!stat.ok && stat.error.code !== "not_found" && stat.error.code !== "forbidden") return davError(req, stat.error);
  const unmapped = !stat.ok && stat.error.code === "not_found";
  if (unmapped) {
    if (req.collection) return davError(req, refusal("needsFileName"));
    const parent = await parentExists(req, req.path);
    if (!parent.ok) return davError(req, parent.error);
  }
  const lock = await req.cap.davLock(req.path, {
    depth: depth.value === "0" ? "0" : "infinity",
    scope,
    owner: ownerEl ? serializeElement(ownerEl) : "",
    seconds,
  });
  if (!lock.ok) {
    const xml =
      lock.error.message === refusal("davLocked").message
        ? `<D:error xmlns:D="DAV:"><D:no-conflicting-lock/></D:error>`
        : undefined;
    return davError(req, lock.error, undefined, xml);
  }
  if (unmapped) {
    // A lock on an unmapped URL makes an empty file there (RFC 4918 §7.3).
    const made = await req.cap.writeFile(req.path, new Response("").body!, {
      length: 0,
      contentType: null,
      ifNoneMatch: "*",
    });
    if (!made.ok) {
      await req.cap.davUnlock(req.path, lock.value.token);
      return davError(req, made.error);
    }
  }
  return lockAnswer(req, lock.value, unmapped ? 201 : 200);
}

export async function davUnlock(req: DavRequest): Promise<Response> {
  const m = /^\s*<([^>]+)>\s*$/.exec(req.c.req.header("lock-token") ?? "");
  if (!m) return davError(req, refusal("badRequest"));
  const done = await req.cap.davUnlock(req.path, m[1]!);
  if (done.ok) return new Response(null, { status: 204 });
  const xml =
    done.error.code === "conflict"
      ? `<D:error xmlns:D="DAV:"><D:lock-token-matches-request-uri/></D:error>`
      : undefined;
  return davError(req, done.error, undefined, xml);
}

export { davPath };
