import { parseRelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import type { CapAuthorize } from "./cap-authorize.ts";

/** Sessions one cap keeps subscriptions for; a new one past this forgets the least recently used. */
export const MAX_MCP_SESSIONS = 16;
/** Resource URIs one session (or one 2026 listen stream) may be subscribed to. */
export const MAX_MCP_SUBSCRIPTIONS = 64;
/** Characters of a subscribed URI: with the counts above, what one cap can make its object hold (~2 MiB). */
export const MAX_MCP_URI_CHARS = 2048;
/** The ids the worker mints for 2025-era sessions (a UUID); anything else names no session. */
const SESSION_ID = /^[0-9a-f-]{36}$/;

interface Session {
  /** Subscribed cap-relative path → the URIs the client named it by. */
  subscriptions: Map<string, string[]>;
  /** Ends the session's open stream, if any: one stream per session, so nothing is announced twice. */
  end?: () => void;
}

/** What {@link CapMcpSessions.subscribe} made of a request. */
export type SubscribeOutcome = "subscribed" | "full" | "no_session";

const encoder = new TextEncoder();

/**
 * The 2025-era MCP sessions of one cap (`resources/subscribe` on a POST, the
 * notifications on the session's GET stream): kept here, the one place every
 * request of the cap reaches whichever worker isolate serves it. Held in
 * memory only, bounded in sessions, subscriptions and URI length; a stream
 * is the cap's watch feed (same scope, revocation and expiry) cut down to
 * the changes the session asked for.
 */
export class CapMcpSessions {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly gate: CapAuthorize) {}

  /**
   * Subscribes `session` to `uri`, which names the cap-relative `rawPath`.
   * `full` when the session holds its most subscriptions already (or the
   * URI is too long to keep), `no_session` for an id the worker never mints.
   */
  async subscribe(session: string, rawPath: string, uri: string): Promise<Result<SubscribeOutcome>> {
    const access = await this.gate.authorize({ rights: ["read"] });
    if (!access.ok) return access;
    const path = parseRelPath(rawPath);
    if (!path.ok) return path;
    if (!SESSION_ID.test(session)) return ok("no_session");
    if (uri.length > MAX_MCP_URI_CHARS) return ok("full");
    const entry = this.touch(session);
    const uris = entry.subscriptions.get(path.value.text) ?? [];
    if (uris.includes(uri)) return ok("subscribed");
    let held = 0;
    for (const named of entry.subscriptions.values()) held += named.length;
    if (held >= MAX_MCP_SUBSCRIPTIONS) return ok("full");
    entry.subscriptions.set(path.value.text, [...uris, uri]);
    return ok("subscribed");
  }

  /** Drops `session`'s subscription to `uri`, if it has one. */
  async unsubscribe(session: string, uri: string): Promise<Result<null>> {
    const access = await this.gate.authorize({ rights: ["read"] });
    if (!access.ok) return access;
    const entry = this.sessions.get(session);
    if (!entry) return ok(null);
    for (const [path, uris] of entry.subscriptions) {
      if (!uris.includes(uri)) continue;
      const left = uris.filter((u) => u !== uri);
      if (left.length === 0) entry.subscriptions.delete(path);
      else entry.subscriptions.set(path, left);
    }
    return ok(null);
  }

  /**
   * `feed` (the cap's watch stream) cut to what `session` wants: each change
   * to a subscribed path with the URIs it was subscribed by, and every
   * creation, deletion and move (the resource list changed), as
   * `data: {path, operation, version, uris}` frames. Backpressure goes back
   * to the journal, which cuts a reader too far behind. A later stream of the
   * same session ends this one.
   */
  feed(session: string, feed: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const entry = this.touch(session);
    entry.end?.();
    const decoder = new TextDecoder();
    let pending = "";
    let end: () => void;
    const cut = new TransformStream<Uint8Array, Uint8Array>({
      start(controller) {
        end = () => {
          try {
            controller.terminate();
          } catch {
            // already ended
          }
        };
        entry.end = end;
      },
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        for (let at = pending.indexOf("\n\n"); at >= 0; at = pending.indexOf("\n\n")) {
          const change = changeOf(pending.slice(0, at));
          pending = pending.slice(at + 2);
          if (!change) continue;
          const uris = entry.subscriptions.get(change.path) ?? [];
          if (uris.length === 0 && change.operation === "modified") continue;
          controller.enqueue(encoder.encode(`data: ${JSON.stringify({ ...change, uris })}\n\n`));
        }
      },
      flush() {
        if (entry.end === end) entry.end = undefined;
      },
    });
    return feed.pipeThrough(cut);
  }

  /** `session`'s entry, made the most recently used; a new one may forget the least recently used. */
  private touch(session: string): Session {
    let entry = this.sessions.get(session);
    if (entry) this.sessions.delete(session);
    else {
      entry = { subscriptions: new Map() };
      if (this.sessions.size >= MAX_MCP_SESSIONS) {
        const [oldest, forgotten] = this.sessions.entries().next().value as [string, Session];
        this.sessions.delete(oldest);
        forgotten.end?.();
      }
    }
    this.sessions.set(session, entry);
    return entry;
  }
}

/** A change of the watch feed's SSE frame; `null` for a comment or a `resume` frame. */
function changeOf(frame: string): { path: string; operation: string; version: string } | null {
  let data = "";
  for (const line of frame.split("\n")) {
    if (line.startsWith("event: ")) return null;
    if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (!data) return null;
  const { path, operation, version } = JSON.parse(data) as { path: string; operation: string; version: string };
  return { path, operation, version };
}
