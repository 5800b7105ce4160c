import fc from "fast-check";
import { RIGHTS } from "../shared/rights.ts";
import { pathText } from "./fuzz-paths.ts";
import type { Surface } from "./fuzz-surfaces.ts";
import { header, json } from "./http-call.ts";
import { role, segment, type VersionPick, versionId, versionText } from "./surface-cases.ts";
import { judgeAnswer, outcomeOf, type Role, sendHttp } from "./surface-target.ts";
import { subdir } from "./vault-fixture.ts";

const CASE_TIMEOUT_MS = 30_000;

/**
 * The web console's API calls, as worker/console/browser/api.ts makes them
 * (its URLs, methods, bodies and headers, fed hostile values), plus its three
 * static files. The console's token is whatever a user pasted: it passes the
 * console's own check (URL-safe characters) or becomes `not-a-cap`.
 */
export interface ConsoleCase {
  role: Role;
  /** A token as pasted, used instead of the role's when set. */
  pasted: string | null;
  call:
    | { api: "info" | "tree" | "audit" }
    | { api: "list"; path: string; cursor: string | null }
    | { api: "read"; path: string; range: string | null }
    | { api: "remove"; path: string }
    | { api: "move"; from: string; to: string }
    | { api: "share"; path: string; rights: unknown; ttlSeconds: unknown; label: unknown; history: unknown }
    | { api: "versions"; path: string; cursor: string | null }
    | { api: "readVersion" | "restore" | "redact"; id: VersionPick }
    | { api: "revokeBelow"; id: "throwaway" | string }
    | { api: "upload"; path: string; contentType: string; body: string }
    | { api: "asset"; file: string };
}

export const consoleSurface: Surface<ConsoleCase> = {
  name: "console",
  cases: (planted) => {
    const path = pathText(planted);
    const calls: fc.Arbitrary<ConsoleCase["call"]> = fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom("info", "tree", "audit").map((api) => ({ api })) },
      {
        weight: 3,
        arbitrary: fc.record({
          api: fc.constant("list" as const),
          path,
          cursor: fc.oneof(fc.constant(null), fc.constantFrom("", "AAAA", "../x", "a.txt", "\u0000", "x".repeat(3000))),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          api: fc.constant("read" as const),
          path,
          range: fc.constantFrom(null, "bytes=0-8191", "bytes=0-0", "bytes=0-99999999", "bytes=9-2"),
        }),
      },
      { weight: 1, arbitrary: fc.record({ api: fc.constant("remove" as const), path }) },
      { weight: 1, arbitrary: fc.record({ api: fc.constant("move" as const), from: path, to: path }) },
      {
        weight: 2,
        arbitrary: fc.record({
          api: fc.constant("share" as const),
          path,
          rights: fc.oneof(fc.subarray([...RIGHTS]), fc.constantFrom(["admin"], [], null, "read")),
          ttlSeconds: fc.constantFrom(null, 3600, 86_400, 0, -1, 1.5, 1e308, "60"),
          label: fc.oneof(fc.constant(null), fc.string({ maxLength: 20 }), fc.constantFrom("x".repeat(201), "\u202e")),
          history: fc.constantFrom(null, "all", "none", 1),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          api: fc.constant("versions" as const),
          path,
          cursor: fc.oneof(fc.constant(null), fc.constantFrom("1", "0", "-1", "x", "9".repeat(30))),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          api: fc.constantFrom("readVersion" as const, "restore" as const, "redact" as const),
          id: versionId,
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          api: fc.constant("revokeBelow" as const),
          id: fc.constantFrom("throwaway", "throwaway", "", "..", "%2e%2e", "0".repeat(16), "x".repeat(300), "a/b"),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({
          api: fc.constant("upload" as const),
          path,
          contentType: fc.constantFrom("application/octet-stream", "text/plain", "image/svg+xml", "text/html", ""),
          body: fc.constantFrom("", "uploaded\n", "<svg onload=alert(1)>", "u".repeat(70_000)),
        }),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom("", "/", "/console.js", "/console.css", "/nope", "/../admin/roots", "/console.js/x")
          .map((file) => ({ api: "asset" as const, file })),
      },
    );
    const pasted = fc.oneof(
      { weight: 12, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom("not-a-cap", "a".repeat(32), "A".repeat(10_000), "_-_-", "0") },
    );
    return fc.record({ role, pasted, call: calls });
  },
  kind: (c) => `console ${c.call.api}`,
  run: async (target, c, report, seen) => {
    const token = c.pasted ?? target.tokens[c.role];
    const owner: Role = c.pasted === null ? c.role : "unknown";
    const base = `${target.base}/object/${encodeURIComponent(token)}`;
    const q = (params: Record<string, string | null>) =>
      Object.entries(params)
        .filter((p): p is [string, string] => p[1] !== null)
        .map(([k, v]) => `${k}=${segment(v)}`)
        .join("&");
    const jsonInit = (method: string, body: unknown) => ({
      method,
      body: JSON.stringify(body),
      headers: { "Content-Type": "application/json" },
    });
    const k = c.call;
    let url: string;
    let init: { method?: string; headers?: Record<string, string>; body?: string } = {};
    let sent: string[] = [];
    switch (k.api) {
      case "info":
        url = base;
        break;
      case "tree":
        url = `${base}/tree`;
        break;
      case "audit":
        url = `${base}/audit?${q({ limit: "200" })}`;
        break;
      case "list":
        url = `${base}/list?${q({ path: k.path, cursor: k.cursor, limit: "100" })}`;
        break;
      case "read":
        url = `${base}/file?${q({ path: k.path })}`;
        if (k.range) init = { headers: { Range: k.range } };
        break;
      case "remove":
        url = `${base}/file?${q({ path: k.path })}`;
        init = { method: "DELETE" };
        break;
      case "move":
        url = `${base}/move`;
        init = jsonInit("POST", { from: k.from, to: k.to });
        break;
      case "share":
        url = `${base}/subdir`;
        init = jsonInit("POST", {
          path: k.path,
          rights: k.rights,
          ttlSeconds: k.ttlSeconds,
          label: k.label,
          history: k.history,
        });
        break;
      case "versions":
        url = `${base}/versions?${q({ path: k.path, cursor: k.cursor, limit: "100" })}`;
        break;
      case "readVersion":
        url = `${base}/versions/${segment(versionText(target, k.id))}`;
        break;
      case "restore":
      case "redact":
        url = `${base}/versions/${segment(versionText(target, k.id))}/${k.api}`;
        init = { method: "POST" };
        break;
      case "revokeBelow": {
        // Only a child minted for the case is ever revoked: the roles' own caps stay alive for the run.
        let id = k.id;
        if (id === "throwaway") {
          const minted = await subdir(capOf(target.base, target.tokens.root), { path: "dir", label: "console revoke" });
          id = minted.id;
        }
        url = `${base}/tree/${encodeURIComponent(id)}`;
        init = { method: "DELETE" };
        break;
      }
      case "upload":
        url = `${base}/file?${q({ path: k.path })}`;
        init = {
          method: "PUT",
          body: k.body,
          headers: { "Content-Type": k.contentType || "application/octet-stream" },
        };
        sent = [k.body];
        break;
      case "asset":
        url = `${target.base}/ui${k.file}`;
        break;
    }
    const observed = await sendHttp(report, url, init, CASE_TIMEOUT_MS);
    seen(`${k.api} ${outcomeOf(observed)}`);
    for (const v of judgeAnswer(target, owner, observed, sent)) report(v.kind, v.detail);
    // The console's error path reads `{ error: { code, message } }`; any other failure it could only show as "HTTP n".
    if (
      observed.status >= 400 &&
      observed.status !== 431 &&
      !(json(observed) as { error?: unknown } | undefined)?.error
    )
      report("other", `a refusal the console cannot show: ${observed.status}`);
    if (k.api === "asset" && observed.status === 200 && !header(observed, "content-security-policy"))
      report("other", `console file ${k.file} without its Content-Security-Policy`);
  },
};

const capOf = (base: string, token: string) => `${base}/object/${token}`;
