import { exports } from "cloudflare:workers";

/** Talks to the worker under test through its real fetch handler. */
export const ORIGIN = "https://vault.test";
export const ADMIN = "test-admin-token";

export function call(method: string, path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  const url = path.startsWith("http") ? path : ORIGIN + path;
  return (exports as any).default.fetch(new Request(url, { ...init, method, headers, body }));
}

export interface Minted {
  token: string;
  url: string;
  id: string;
  rights: string[];
  expiresAt: string | null;
}

export async function mintRoot(prefix: string, extra: Record<string, unknown> = {}): Promise<Minted> {
  const res = await call("POST", "/admin/roots", {
    headers: { authorization: `Bearer ${ADMIN}` },
    json: { backend: "r2", prefix, ...extra },
  });
  if (res.status !== 201) throw new Error(`mint failed: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Every live root, following `GET /admin/roots` page by page (`limit` per page), and the pages' sizes. */
export async function allRoots(
  limit?: number,
): Promise<{ roots: { id: string; [k: string]: unknown }[]; pages: number[] }> {
  const roots: { id: string }[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams();
    if (cursor) query.set("cursor", cursor);
    if (limit !== undefined) query.set("limit", String(limit));
    const res = await call("GET", `/admin/roots?${query}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    if (res.status !== 200) throw new Error(`listing roots failed: ${res.status} ${await res.text()}`);
    const page = (await res.json()) as { roots: { id: string }[]; cursor: string | null };
    roots.push(...page.roots);
    pages.push(page.roots.length);
    cursor = page.cursor;
  } while (cursor);
  return { roots, pages };
}

const q = (path: string) => `?path=${encodeURIComponent(path)}`;

/** A thin cap handle for tests; every method returns the raw Response. */
export function cap(token: string) {
  const base = `/object/${token}`;
  return {
    token,
    info: () => call("GET", base),
    revoke: () => call("DELETE", base),
    read: (path: string, headers?: HeadersInit) => call("GET", `${base}/file${q(path)}`, headers ? { headers } : {}),
    write: (path: string, body: string | Uint8Array, headers?: HeadersInit) =>
      call("PUT", `${base}/file${q(path)}`, { body, ...(headers ? { headers } : {}) }),
    remove: (path: string) => call("DELETE", `${base}/file${q(path)}`),
    stat: (path: string) => call("GET", `${base}/stat${q(path)}`),
    makeFolder: (path: string) => call("PUT", `${base}/folder${q(path)}`),
    removeFolder: (path: string) => call("DELETE", `${base}/folder${q(path)}`),
    list: (path = "", extra = "") => call("GET", `${base}/list${q(path)}${extra}`),
    subdir: (json: Record<string, unknown>) => call("POST", `${base}/subdir`, { json }),
    children: () => call("GET", `${base}/children`),
    revokeChild: (id: string) => call("DELETE", `${base}/children/${id}`),
    move: (json: Record<string, unknown>) => call("POST", `${base}/move`, { json }),
  };
}

export async function errorCode(res: Response): Promise<string> {
  const body = (await res.json()) as { error?: { code?: string } };
  return body.error?.code ?? `(no error; status ${res.status})`;
}

export async function child(parent: ReturnType<typeof cap>, json: Record<string, unknown>) {
  const res = await parent.subdir(json);
  if (res.status !== 201) throw new Error(`subdir failed: ${res.status} ${await res.text()}`);
  const minted = (await res.json()) as Minted;
  return { ...cap(minted.token), minted };
}
