import type { HolderJwk } from "../../../shared/holder-key.ts";
import { signProof } from "../../../shared/holder-proof-sign.ts";
import type { ConsoleKey } from "./holder-store.ts";
import type { AuditTrail, CapInfo, CapTree, ErrorBody, ListPage, MintedCap, Right, VersionPage } from "./wire.ts";

/** A refusal from the vault, carrying its own code and message for the console to show as they are. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface GrantForm {
  path: string;
  rights: Right[];
  ttlSeconds: number | null;
  label: string | null;
  /** `"all"`: the child also sees the history written before its mint. */
  history: "all" | null;
  /** The child's holder (a public JWK), or null for a bearer child (refused under a bound cap). */
  holder: HolderJwk | null;
}

/** A request's DPoP header for a holder-bound cap: a fresh proof for this method, URL, token and body. */
export type Prover = (
  method: string,
  target: string,
  body: Uint8Array<ArrayBuffer> | null,
) => Promise<Record<string, string>>;

/**
 * The cap's HTTP API, and the only place the token is used: it goes into
 * these request URLs (as the API defines them) and nowhere else, no storage,
 * no other URL. Requests carry no Referer and no cookies. With `key` (a
 * holder-bound cap), every request carries its own proof in the `DPoP`
 * header, never in a URL.
 */
export function capApi(token: string, key: ConsoleKey | null) {
  const prove: Prover = async (method, target, body): Promise<Record<string, string>> => {
    if (!key) return {};
    return { DPoP: await signProof(key, { method, url: new URL(target, location.href).href, token, body }) };
  };
  const base = `/object/${encodeURIComponent(token)}`;
  const url = (sub: string, params: Record<string, string | null> = {}) => {
    const query = Object.entries(params)
      .filter((p): p is [string, string] => p[1] !== null)
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join("&");
    return `${base}${sub}${query ? `?${query}` : ""}`;
  };
  const call = async (
    method: string,
    target: string,
    init: { body?: Uint8Array<ArrayBuffer>; headers?: Record<string, string> } = {},
  ): Promise<Response> => {
    // As the SDK does: a bound cap's request with a method that may carry a body sends one (empty if none),
    // and its proof names that body's digest, so the vault never sees a body the proof does not cover.
    const body = key && method !== "GET" && method !== "DELETE" ? (init.body ?? new Uint8Array(0)) : init.body;
    const res = await fetch(target, {
      ...init,
      ...(body === undefined ? {} : { body }),
      headers: { ...init.headers, ...(await prove(method, target, body ?? null)) },
      method,
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer",
    });
    if (!res.ok) throw await errorOf(res);
    return res;
  };
  const json = async <T>(method: string, target: string, body?: unknown): Promise<T> => {
    // Bytes, not a string: the proof's content_digest must cover exactly what is sent.
    const init =
      body === undefined
        ? {}
        : { body: new TextEncoder().encode(JSON.stringify(body)), headers: { "Content-Type": "application/json" } };
    return (await call(method, target, init)).json() as Promise<T>;
  };
  return {
    fileUrl: (path: string) => url("/file", { path }),
    /** Headers proving one request (none for a bearer cap), for requests made outside `call` (uploads). */
    prove,
    bound: key !== null,
    info: () => json<CapInfo>("GET", url("")),
    list: (path: string, cursor: string | null) => json<ListPage>("GET", url("/list", { path, cursor, limit: "100" })),
    read: (path: string, range?: string) =>
      call("GET", url("/file", { path }), range ? { headers: { Range: range } } : {}),
    remove: (path: string) => call("DELETE", url("/file", { path })),
    makeFolder: (path: string) => call("PUT", url("/folder", { path })),
    removeFolder: (path: string) => call("DELETE", url("/folder", { path })),
    move: (from: string, to: string) => json<unknown>("POST", url("/move"), { from, to }),
    share: (form: GrantForm) => json<MintedCap>("POST", url("/subdir"), form),
    tree: () => json<CapTree>("GET", url("/tree")),
    revokeBelow: (id: string) => call("DELETE", url(`/tree/${encodeURIComponent(id)}`)),
    versions: (path: string, cursor: string | null, limit = 100) =>
      json<VersionPage>("GET", url("/versions", { path, cursor, limit: String(limit) })),
    readVersion: (id: string) => call("GET", url(`/versions/${encodeURIComponent(id)}`)),
    restore: (id: string) => json<unknown>("POST", url(`/versions/${encodeURIComponent(id)}/restore`)),
    redact: (id: string) => call("POST", url(`/versions/${encodeURIComponent(id)}/redact`)),
    audit: () => json<AuditTrail>("GET", url("/audit", { limit: "200" })),
  };
}

export type CapApi = ReturnType<typeof capApi>;

/** The vault's error body, or a plain description when the answer was not one of its own. */
export async function errorOf(res: Response): Promise<ApiError> {
  const body = (await res.json().catch(() => null)) as Partial<ErrorBody> | null;
  const error = body?.error;
  return error ? new ApiError(error.code, error.message) : new ApiError("http", `HTTP ${res.status}`);
}
