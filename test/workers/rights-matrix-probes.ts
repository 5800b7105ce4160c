import { RIGHTS, type Right } from "../../shared/rights.ts";
import { call, cap, child } from "./vault.ts";

/**
 * How rights-matrix.workers.test.ts reaches every surface: one operation's
 * outcome ("ok" or the refusal's code) per surface, the root that seeds what
 * an operation acts on, and the caps that must be refused or must succeed.
 */

export type Outcome = string; // "ok", or the refusal's code

export interface Op {
  name: string;
  /** All of these (with `any`, at least one). */
  needs: Right[];
  any?: boolean;
  /** What it inherently needs besides, to succeed (the memory tool looks before it deletes or renames). */
  also?: Right[];
  /** Puts what the operation acts on in place, through the root; returns what `act` needs. */
  prepare?: (n: number) => Promise<Ctx>;
  act: (token: string, ctx: Ctx) => Promise<Outcome>;
}

export interface Ctx {
  file: string;
  older?: string;
  child?: string;
}

let root: ReturnType<typeof cap>;
const caps = new Map<string, string>();

/** The full root cap every operation's target is seeded through, and every matrix cap is minted from. */
export function useRoot(token: string): ReturnType<typeof cap> {
  root = cap(token);
  caps.clear();
  return root;
}

export async function capWith(rights: Right[]): Promise<string> {
  const key = rights.join(",");
  let token = caps.get(key);
  if (!token) {
    token = (await child(root, { path: "", rights })).token;
    caps.set(key, token);
  }
  return token;
}

async function outcome(res: Response): Promise<Outcome> {
  if (res.ok) {
    await res.body?.cancel();
    return "ok";
  }
  const body = (await res.json()) as { error?: { code?: string } };
  return body.error?.code ?? `status ${res.status}`;
}

export const q = (path: string) => `?path=${encodeURIComponent(path)}`;
export const http = (token: string, method: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
  call(method, `/object/${token}${path}`, init).then(outcome);

async function put(path: string, text: string): Promise<void> {
  const res = await root.write(path, text);
  if (!res.ok) throw new Error(`seeding ${path}: ${res.status} ${await res.text()}`);
}

/** A fresh file with two versions; `older` is the first one's id. */
export async function versioned(n: number): Promise<Ctx> {
  const file = `m/${n}/v.txt`;
  await put(file, "first");
  await put(file, "second");
  const page = (await (await call("GET", `/object/${root.token}/versions${q(file)}`)).json()) as {
    versions: { id: string }[];
  };
  return { file, older: page.versions.at(-1)!.id };
}

export const file = async (n: number): Promise<Ctx> => {
  const path = `m/${n}/f.txt`;
  await put(path, "hello");
  return { file: path };
};

/** A fresh folder of two files (`file` is the folder): what a folder move or a recursive delete acts on. */
export const folder = async (n: number): Promise<Ctx> => {
  await put(`m/${n}/d/a.txt`, "hello");
  await put(`m/${n}/d/s/b.txt`, "hello");
  return { file: `m/${n}/d` };
};

/** The folder a `file` is in. */
export const dirOf = (c: Ctx) => c.file.replace(/\/f\.txt$/, "");

/** What a memory-tool command answered: "ok", or the wire code its error text starts with. */
export async function memory(token: string, json: Record<string, unknown>): Promise<Outcome> {
  const res = await call("POST", `/object/${token}/memory`, { json });
  const text = await res.text();
  if (res.ok && !/^Error/.test(text)) return "ok";
  return /forbidden/.test(text) ? "forbidden" : `failed: ${res.status} ${text.slice(0, 200)}`;
}

/** A Cap'n Web call over one HTTP batch: "ok", or the refusal code in the rejection. */
export async function rpc(token: string, method: string, args: unknown[]): Promise<Outcome> {
  const body = [JSON.stringify(["push", ["pipeline", 0, [method], args]]), JSON.stringify(["pull", 1])].join("\n");
  const res = await call("POST", `/object/${token}/rpc`, { body });
  const text = await res.text();
  if (!/"reject"/.test(text)) return res.ok ? "ok" : `status ${res.status}`;
  return /forbidden/.test(text) ? "forbidden" : `rejected: ${text.slice(0, 200)}`;
}

/** One MCP JSON-RPC request: "ok", or "forbidden" when the method or tool is not offered to this cap or refused it. */
export async function mcpMethod(token: string, method: string, params: Record<string, unknown>): Promise<Outcome> {
  const res = await call("POST", `/object/${token}/mcp`, {
    headers: { accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 1, method, params },
  });
  const text = await res.text();
  const answer = JSON.parse(text.replace(/^event: message\ndata: /, "").trim()) as {
    result?: { isError?: boolean; content?: { text?: string }[] };
    error?: { message: string };
  };
  if (answer.result && !answer.result.isError) return "ok";
  const why = answer.error?.message ?? answer.result?.content?.[0]?.text ?? text;
  return /forbidden|not found|disabled/i.test(why) ? "forbidden" : `failed: ${why.slice(0, 200)}`;
}

/** An MCP tool call: "ok", or "forbidden" when the tool is not offered to this cap or refused it. */
export const mcp = (token: string, name: string, args: Record<string, unknown>): Promise<Outcome> =>
  mcpMethod(token, "tools/call", { name, arguments: args });

export async function mcpTools(token: string): Promise<string[]> {
  const res = await call("POST", `/object/${token}/mcp`, {
    headers: { accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} },
  });
  const text = await res.text();
  const answer = JSON.parse(text.replace(/^event: message\ndata: /, "").trim()) as {
    result: { tools: { name: string }[] };
  };
  return answer.result.tools.map((t) => t.name);
}

/** Everything a refused operation must leave as it was, as the root sees it. */
export async function snapshot(ctx: Ctx | undefined): Promise<unknown> {
  const listing = await (await call("GET", `/object/${root.token}/list${q("")}&depth=0`)).json();
  const tree = await (await call("GET", `/object/${root.token}/tree`)).json();
  const versions = ctx?.older ? await (await call("GET", `/object/${root.token}/versions${q(ctx.file)}`)).json() : null;
  const older = ctx?.older ? (await call("GET", `/object/${root.token}/versions/${ctx.older}`)).status : null;
  return { listing, tree, versions, older };
}

/** The caps that must be refused: each lacks one needed right (for `any`, all of them) and holds every other. */
export function lacking(op: Op): Right[][] {
  const missing = op.any ? [op.needs] : op.needs.map((r) => [r]);
  return missing.map((gone) => RIGHTS.filter((r) => !gone.includes(r)));
}

/** The caps that must succeed: exactly what is needed (for `any`, each one alone). */
export function sufficient(op: Op): Right[][] {
  const sets = op.any ? op.needs.map((r) => [r]) : [op.needs];
  return sets.map((set) => RIGHTS.filter((r) => set.includes(r) || op.also?.includes(r)));
}
