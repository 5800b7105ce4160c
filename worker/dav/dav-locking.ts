/**
 * WebDAV locks (RFC 4918 §6-7): LOCK and UNLOCK, and the gate every change
 * passes (the If header, then every live lock on what it changes). The locks
 * themselves live in the cap's object (durable-objects/cap-dav-locks.ts).
 */
import type { DavLock } from "../../durable-objects/cap-dav-locks.ts";
import { lockCovers, MAX_LOCK_SECONDS, pathWithin } from "../../durable-objects/cap-dav-locks.ts";
import { bareEtag } from "../../shared/http-conditions.ts";
import { refusal } from "../../shared/refusals.ts";
import { type DavRequest, davError, parentExists, readXml } from "./dav-methods.ts";
import { davHref, type IfList, parseDepth, parseIf, parseTimeout } from "./dav-request.ts";
import { childNamed, DAV_NS, DAV_XML_MAX_BYTES, DAV_XML_MAX_DEPTH, escapeXml, serializeElement } from "./dav-xml.ts";

const DEFAULT_LOCK_SECONDS = 600;

/**
 * The lock and If checks of a write (RFC 4918 §6, §10.4): every live lock
 * on a path it changes (`targets`) or below a folder it changes whole
 * (`subtrees`) must have its token submitted (else 423), once the If header
 * holds (else 412). `null` when the write may go ahead.
 */
export async function lockGate(req: DavRequest, targets: string[], subtrees: string[]): Promise<Response | null> {
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

export function activeLockXml(req: DavRequest, lock: DavLock): string {
  const left = Math.max(0, Math.ceil((lock.expiresAt - Date.now()) / 1000));
  return (
    `<D:activelock><D:locktype><D:write/></D:locktype><D:lockscope><D:${lock.scope}/></D:lockscope>` +
    `<D:depth>${lock.depth === "0" ? "0" : "infinity"}</D:depth>${lock.owner}` +
    `<D:timeout>Second-${left}</D:timeout><D:locktoken><D:href>${escapeXml(lock.token)}</D:href></D:locktoken>` +
    `<D:lockroot><D:href>${escapeXml(davHref(req.mount, lock.path, false))}</D:href></D:lockroot></D:activelock>`
  );
}

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
