import fc from "fast-check";
import { pathText } from "./fuzz-paths.ts";
import type { Surface } from "./fuzz-surfaces.ts";
import { header } from "./http-call.ts";
import { callWindow } from "./http-window.ts";
import { role, segment, type VersionPick, versionId, versionText } from "./surface-cases.ts";
import { capUrl, judgeAnswer, judgeText, outcomeOf, type Role, sendHttp } from "./surface-target.ts";
import { openSocket } from "./ws-client.ts";

const CASE_TIMEOUT_MS = 30_000;
/** How long a feed is read before the case cuts it: enough for the replay after `since` to arrive. */
const FEED_WINDOW_MS = 300;
const FEED_BYTES = 256 * 1024;

/** GET /versions, GET /versions/<id>, restore and redact: every role, every id shape, wrong methods. */
export interface VersionsCase {
  role: Role;
  op: "list" | "read" | "restore" | "redact" | "wrong";
  method: string;
  path: string | null;
  id: VersionPick;
  extra: string;
  body?: string;
}

const listQuery = fc.constantFrom(
  "",
  "",
  "&limit=1",
  "&limit=100",
  "&limit=101",
  "&limit=0",
  "&limit=-1",
  "&limit=x",
  "&cursor=1",
  "&cursor=0",
  "&cursor=-1",
  `&cursor=${"9".repeat(30)}`,
  "&cursor=abc",
  "&cursor=1&cursor=2",
  "&since=1",
  "&depth=0",
);

export const versionsSurface: Surface<VersionsCase> = {
  name: "versions",
  cases: (planted) => {
    const path = fc.oneof({ weight: 8, arbitrary: pathText(planted) }, { weight: 1, arbitrary: fc.constant(null) });
    const base = { role, path, id: versionId, extra: listQuery };
    return fc.oneof(
      { weight: 3, arbitrary: fc.record({ ...base, op: fc.constant("list" as const), method: fc.constant("GET") }) },
      { weight: 3, arbitrary: fc.record({ ...base, op: fc.constant("read" as const), method: fc.constant("GET") }) },
      {
        weight: 3,
        arbitrary: fc.record(
          {
            ...base,
            op: fc.constant("restore" as const),
            method: fc.constant("POST"),
            body: fc.constantFrom("", "{}", '{"path":"../x"}', "x".repeat(70_000)),
          },
          { requiredKeys: ["role", "path", "id", "extra", "op", "method"] },
        ),
      },
      { weight: 2, arbitrary: fc.record({ ...base, op: fc.constant("redact" as const), method: fc.constant("POST") }) },
      {
        weight: 1,
        arbitrary: fc.record({
          ...base,
          op: fc.constant("wrong" as const),
          method: fc.constantFrom("PUT", "DELETE", "PATCH", "GET", "POST"),
        }),
      },
    );
  },
  kind: (c) => `${c.method} ${c.op === "list" ? "/versions" : `/versions/<id>${c.op === "read" ? "" : `/${c.op}`}`}`,
  run: async (target, c, report, seen) => {
    const id = segment(versionText(target, c.id));
    const cap = capUrl(target, c.role);
    const url =
      c.op === "list"
        ? `${cap}/versions?${c.path === null ? c.extra.slice(1) : `path=${segment(c.path)}${c.extra}`}`
        : c.op === "read"
          ? `${cap}/versions/${id}`
          : c.op === "wrong"
            ? `${cap}/versions/${id}/${c.method === "GET" ? "restore" : "x"}`
            : `${cap}/versions/${id}/${c.op}`;
    const body = c.body !== undefined && c.method !== "GET" ? c.body : undefined;
    const observed = await sendHttp(
      report,
      url,
      { method: c.method, ...(body === undefined ? {} : { body }) },
      CASE_TIMEOUT_MS,
    );
    seen(`${c.op} ${outcomeOf(observed)}`);
    for (const v of judgeAnswer(target, c.role, observed, body ? [body] : [])) report(v.kind, v.detail);
  },
};

/** GET /watch: as server-sent events and as a WebSocket, with every `since` shape. */
export interface WatchCase {
  role: Role;
  transport: "sse" | "socket";
  since: VersionPick | null;
  lastEventId: VersionPick | null;
  extra: string;
}

export const watchSurface: Surface<WatchCase> = {
  name: "watch",
  cases: () =>
    fc.record({
      role,
      transport: fc.constantFrom<"sse" | "socket">("sse", "sse", "socket"),
      since: fc.option(versionId, { freq: 3 }),
      lastEventId: fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: versionId }),
      extra: fc.constantFrom("", "", "", "&since=1", "&x=1", "&since", "&path=a.txt"),
    }),
  kind: (c) => `GET /watch${c.transport === "socket" ? " (WebSocket)" : ""}`,
  run: async (target, c, report, seen) => {
    const since = c.since === null ? "" : `since=${segment(versionText(target, c.since))}`;
    const query = `${since}${c.extra}`.replace(/^&/, "");
    const url = `${capUrl(target, c.role)}/watch${query ? `?${query}` : ""}`;
    const headers: Record<string, string> =
      c.lastEventId === null ? {} : { "last-event-id": versionText(target, c.lastEventId).slice(0, 200) };
    if (c.transport === "sse") {
      let observed = await callWindow(url, { headers }, FEED_WINDOW_MS, FEED_BYTES, CASE_TIMEOUT_MS);
      // A pooled connection closed under the request: a drop, and the feed asked again (as sendHttp does).
      if (observed.status === 0 && /closed|ECONNRESET/.test(observed.error ?? "")) {
        report("drop", `connection closed without an answer (${observed.error}); sent again`);
        observed = await callWindow(url, { headers }, FEED_WINDOW_MS, FEED_BYTES, CASE_TIMEOUT_MS);
      }
      seen(`sse ${outcomeOf(observed)}`);
      for (const v of judgeAnswer(target, c.role, observed, [])) report(v.kind, v.detail);
      if (observed.status === 200 && !header(observed, "content-type")?.startsWith("text/event-stream"))
        report("other", `a feed answered as ${header(observed, "content-type")}`);
      return;
    }
    const socket = await openSocket(url, headers, CASE_TIMEOUT_MS);
    try {
      seen(`socket ${outcomeOf(socket.handshake)}`);
      if (socket.handshake.status !== 101) {
        for (const v of judgeAnswer(target, c.role, socket.handshake, [])) report(v.kind, v.detail);
        return;
      }
      const until = Date.now() + FEED_WINDOW_MS;
      while (Date.now() < until && socket.closeCode === null) await socket.next(until - Date.now());
      for (const v of judgeText(target, c.role, socket.messages.join("\n"), [])) report(v.kind, v.detail);
      for (const m of socket.messages)
        if (!isJson(m)) report("other", `a watch message that is not JSON: ${m.slice(0, 120)}`);
      if (socket.closeCode !== null && socket.closeCode >= 1011 && socket.closeCode <= 1014)
        report("5xx", `the feed socket closed with ${socket.closeCode}`);
    } finally {
      socket.close();
    }
  },
};

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
