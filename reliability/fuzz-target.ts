import type { Backend } from "../shared/wire-types.ts";
import type { FuzzCase, TokenPick } from "./fuzz-case.ts";
import { call, callFresh, type Observed } from "./http-call.ts";
import { rawCall } from "./raw-http.ts";
import { type Fixture, subdir } from "./vault-fixture.ts";

/** The caps one backend's fuzz run sends its cases to, by role. */
export interface FuzzTarget {
  backend: Backend;
  base: string;
  port: number;
  tokens: Record<"root" | "child" | "readOnlyChild" | "revoked", string>;
  rootUrl: string;
}

export async function fuzzTarget(fixture: Fixture, backend: Backend): Promise<FuzzTarget> {
  const root = fixture.roots[backend];
  const child = await subdir(root.url, { path: "dir" });
  const readOnly = await subdir(root.url, { path: "", rights: ["read", "list"] });
  const revoked = await subdir(root.url, { path: "dir", label: "to revoke" });
  await call(revoked.url, { method: "DELETE" });
  const base = fixture.vault.url;
  return {
    backend,
    base,
    port: Number(new URL(base).port),
    rootUrl: root.url,
    tokens: { root: root.token, child: child.token, readOnlyChild: readOnly.token, revoked: revoked.token },
  };
}

function resolveToken(target: FuzzTarget, pick: TokenPick, root = target.tokens.root): string {
  if (typeof pick === "string")
    return pick === "unknown" ? "b".repeat(32) : pick === "root" ? root : target.tokens[pick];
  if ("literal" in pick) return pick.literal;
  const t = root;
  switch (pick.mangle) {
    case "upper":
      return t.toUpperCase();
    case "suffix":
      return `${t}a`;
    case "prefix":
      return `a${t}`;
    case "truncate":
      return t.slice(0, -1);
    case "percent":
      return [...t].map((c) => `%${c.charCodeAt(0).toString(16)}`).join("");
    case "dotdot":
      return `${target.tokens.child}/..`;
    case "slash":
      return `${t}/`;
  }
}

/** Picks that may name a live cap of the run (a mangled token may still be accepted as its original). */
const mayBeLive = (pick: TokenPick) =>
  typeof pick === "string" ? pick !== "revoked" && pick !== "unknown" : "mangle" in pick;

/**
 * Sends one case. Revoking a cap by its own URL (in any spelling) is
 * redirected to a throwaway child minted for the purpose, spelled the same
 * way, so the fuzz never revokes the caps it runs on.
 */
export async function send(target: FuzzTarget, c: FuzzCase, timeoutMs: number, fresh = false): Promise<Observed> {
  let token = resolveToken(target, c.token);
  if (c.method === "DELETE" && c.route === "" && mayBeLive(c.token)) {
    const throwaway = await subdir(target.rootUrl, { path: "dir" }).catch(() => null);
    if (throwaway === null)
      return { status: 0, headers: [], body: new Uint8Array(), error: "could not mint the throwaway cap to revoke" };
    token = resolveToken(
      target,
      c.token === "child" || c.token === "readOnlyChild" ? "root" : c.token,
      throwaway.token,
    );
  }
  const url =
    c.target === "object"
      ? `${target.base}/object/${token}${c.route}${c.query ? `?${c.query}` : ""}`
      : `${target.base}${c.route}`;
  // A body shorter than declared may be waited for until the deadline; 5 s is plenty to see any answer.
  if (c.declaredLength !== undefined) return rawCall(target.port, rawRequest(url, c), Math.min(timeoutMs, 5_000));
  const body = c.body !== undefined && c.method !== "GET" && c.method !== "HEAD" ? c.body : undefined;
  if (fresh)
    return callFresh(
      new URL(url).href,
      { method: c.method, headers: c.headers, ...(body === undefined ? {} : { body }) },
      timeoutMs,
    );
  return call(url, { method: c.method, headers: c.headers, ...(body === undefined ? {} : { body }) }, timeoutMs);
}

function rawRequest(url: string, c: FuzzCase): Uint8Array {
  const parsed = new URL(url);
  const body = typeof c.body === "string" ? new TextEncoder().encode(c.body) : (c.body ?? new Uint8Array());
  const head = `${c.method} ${parsed.pathname}${parsed.search} HTTP/1.1\r\nHost: ${parsed.host}\r\nContent-Length: ${c.declaredLength}\r\nConnection: close\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}
