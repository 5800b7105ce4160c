import { refuse } from "../../shared/refusals.ts";
import { ok, type Result } from "../../shared/result.ts";

/**
 * A WebDAV request's URL path below the mount, decoded to the cap-relative
 * path the cap's object checks (durable-objects/path-check.ts): each segment
 * percent-decoded strictly; a decoded `/` or a bad escape is refused here,
 * and `..` or `.` are left for the one path parser to refuse.
 */
export function davPath(rest: string): Result<{ path: string; collection: boolean }> {
  const collection = rest.endsWith("/") || rest === "";
  const segments = rest.split("/").filter((s, i, all) => !(s === "" && (i === 0 || i === all.length - 1)));
  const decoded: string[] = [];
  for (const segment of segments) {
    let text: string;
    try {
      text = decodeURIComponent(segment);
    } catch {
      return refuse("invalidPath");
    }
    if (text.includes("/")) return refuse("invalidPath");
    decoded.push(text);
  }
  return ok({ path: decoded.join("/"), collection });
}

/** The href of a cap-relative path under `mount` (the request's own `/object/<token>/dav` or `/dav`). */
export function davHref(mount: string, path: string, collection: boolean): string {
  const encoded = path === "" ? "" : path.split("/").map(encodeSegment).join("/");
  return `${mount}/${encoded}${collection && encoded !== "" ? "/" : ""}`;
}

function encodeSegment(segment: string): string {
  return encodeURIComponent(segment).replace(/[!'()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
}

export type Depth = "0" | "1" | "infinity";

/** The Depth header (RFC 4918 §10.2); absent is `fallback`. */
export function parseDepth(header: string | undefined, fallback: Depth, allowed: readonly Depth[]): Result<Depth> {
  const value = header === undefined ? fallback : header.trim().toLowerCase();
  return (allowed as readonly string[]).includes(value) ? ok(value as Depth) : refuse("davDepth");
}

/** The Overwrite header (RFC 4918 §10.6); absent is T. */
export function parseOverwrite(header: string | undefined): Result<boolean> {
  if (header === undefined) return ok(true);
  const v = header.trim().toUpperCase();
  return v === "T" ? ok(true) : v === "F" ? ok(false) : refuse("davOverwrite");
}

/**
 * The Destination header as a cap-relative path: it must name this vault
 * (the request's host, or the configured public origin) and lie under the
 * same mount, so another cap's URL or another host is refused, never
 * followed. The URL parser resolves `..` and `%2e%2e` before the mount is
 * compared, so no spelling climbs out of it.
 */
export function destinationPath(
  header: string | undefined,
  requestUrl: string,
  mount: string,
  publicOrigin: string | null,
): Result<{ path: string; collection: boolean }> {
  if (header === undefined || header.trim() === "") return refuse("davDestination");
  let url: URL;
  try {
    url = new URL(header.trim(), requestUrl);
  } catch {
    return refuse("davDestination");
  }
  const own = new URL(requestUrl);
  if (url.protocol !== "http:" && url.protocol !== "https:") return refuse("davDestination");
  if (url.host !== own.host && url.origin !== publicOrigin) return refuse("davDestinationOutside");
  if (url.search !== "" || url.hash !== "") return refuse("davDestinationOutside");
  if (url.pathname !== mount && !url.pathname.startsWith(`${mount}/`)) return refuse("davDestinationOutside");
  return davPath(url.pathname.slice(mount.length));
}

/** A lock's asked life: `Second-N` or `Infinite` (RFC 4918 §10.7), first one we understand, else the default. */
export function parseTimeout(header: string | undefined, fallback: number, max: number): number {
  for (const part of (header ?? "").split(",")) {
    const v = part.trim();
    if (/^infinite$/i.test(v)) return max;
    const m = /^second-(\d{1,10})$/i.exec(v);
    if (m) return Math.min(Math.max(1, Number(m[1])), max);
  }
  return fallback;
}

/** One condition of an If header list: a state (lock) token or an entity tag, maybe negated. */
export interface IfCondition {
  not: boolean;
  kind: "token" | "etag";
  value: string;
}

/** One list of the If header, with the resource it is tagged with (a cap-relative path) or `null` for the request's. */
export interface IfList {
  resource: string | null;
  conditions: IfCondition[];
}

const MAX_IF_LISTS = 32;

/**
 * Parses an If header (RFC 4918 §10.4) into its lists. Tagged resources are
 * resolved like Destination; one outside the mount never matches a lock.
 * `null` for a malformed header (answered 400).
 */
export function parseIf(
  header: string,
  requestUrl: string,
  mount: string,
  publicOrigin: string | null,
): IfList[] | null {
  const lists: IfList[] = [];
  let resource: string | null = null;
  let i = 0;
  const s = header;
  const skip = () => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  while (true) {
    skip();
    if (i >= s.length) break;
    if (lists.length >= MAX_IF_LISTS) return null;
    if (s[i] === "<") {
      const end = s.indexOf(">", i);
      if (end === -1) return null;
      const dest = destinationPath(s.slice(i + 1, end), requestUrl, mount, publicOrigin);
      resource = dest.ok ? dest.value.path : "\u0000outside";
      i = end + 1;
      continue;
    }
    if (s[i] !== "(") return null;
    i++;
    const conditions: IfCondition[] = [];
    while (true) {
      skip();
      if (s[i] === ")") {
        i++;
        break;
      }
      let not = false;
      if (/^not\b/i.test(s.slice(i, i + 4))) {
        not = true;
        i += 3;
        skip();
      }
      if (s[i] === "<") {
        const end = s.indexOf(">", i);
        if (end === -1) return null;
        conditions.push({ not, kind: "token", value: s.slice(i + 1, end) });
        i = end + 1;
      } else if (s[i] === "[") {
        const end = s.indexOf("]", i);
        if (end === -1) return null;
        conditions.push({ not, kind: "etag", value: s.slice(i + 1, end) });
        i = end + 1;
      } else return null;
      if (conditions.length > MAX_IF_LISTS) return null;
    }
    if (conditions.length === 0) return null;
    lists.push({ resource, conditions });
  }
  return lists.length > 0 ? lists : null;
}
