/**
 * WebDAV properties: the live ones a resource shows (size, etag, type,
 * locks), the dead ones clients set, one PROPFIND response each, and
 * PROPPATCH, all or nothing. Dead properties live in the cap's object
 * (durable-objects/cap-dav-props.ts).
 */
import type { DavLock } from "../../durable-objects/cap-dav-locks.ts";
import { lockCovers } from "../../durable-objects/cap-dav-locks.ts";
import {
  type DeadProp,
  MAX_DAV_PROP_CAP_BYTES,
  MAX_DAV_PROP_RESOURCES,
  MAX_DAV_PROP_VALUE_BYTES,
  MAX_DAV_PROPS_PER_RESOURCE,
  type PropOp,
} from "../../durable-objects/cap-dav-props.ts";
import { refusal } from "../../shared/refusals.ts";
import type { ListEntry, Stat } from "../../shared/wire-types.ts";
import { activeLockXml, lockGate } from "./dav-locking.ts";
import { type DavRequest, davError, multistatus, readXml, statusLine } from "./dav-methods.ts";
import { davHref } from "./dav-request.ts";
import {
  childrenNamed,
  DAV_NS,
  DAV_XML_MAX_BYTES,
  DAV_XML_MAX_DEPTH,
  emptyElement,
  escapeXml,
  innerXml,
  propElement,
  type XmlElement,
  xmlSafe,
} from "./dav-xml.ts";

export type PropName = { ns: string; local: string };

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

export type PropRequest = { kind: "allprop" } | { kind: "propname" } | { kind: "prop"; names: PropName[] };

const isLive = (ns: string, local: string) => ns === DAV_NS && (LIVE_PROPS as readonly string[]).includes(local);

export function propResponse(
  req: DavRequest,
  r: Resource,
  want: PropRequest,
  locks: DavLock[],
  dead: DeadProp[],
): string {
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

export function resourceOf(path: string, stat: Stat | ListEntry): Resource {
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
