import { beforeAll, describe, expect, it } from "vitest";
import { RIGHTS, type Right } from "../../shared/rights.ts";
import { call, cap, child, mintRoot } from "./vault.ts";

/**
 * Every operation on every surface against the rights it needs: a cap
 * holding every right but one it needs is refused with `forbidden` and
 * changes nothing; a cap holding only what it needs succeeds. A swap of
 * rights (delete allowed with write, a move with write alone) fails here
 * whatever the bisimulation's seed. One vault: the caps are children of one
 * root, minted once per set of rights.
 */

type Outcome = string; // "ok", or the refusal's code

interface Op {
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

interface Ctx {
  file: string;
  older?: string;
  child?: string;
}

let root: ReturnType<typeof cap>;
let counter = 0;
const caps = new Map<string, string>();

async function capWith(rights: Right[]): Promise<string> {
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

const q = (path: string) => `?path=${encodeURIComponent(path)}`;
const http = (token: string, method: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
  call(method, `/object/${token}${path}`, init).then(outcome);

async function put(path: string, text: string): Promise<void> {
  const res = await root.write(path, text);
  if (!res.ok) throw new Error(`seeding ${path}: ${res.status} ${await res.text()}`);
}

/** A fresh file with two versions; `older` is the first one's id. */
async function versioned(n: number): Promise<Ctx> {
  const file = `m/${n}/v.txt`;
  await put(file, "first");
  await put(file, "second");
  const page = (await (await call("GET", `/object/${root.token}/versions${q(file)}`)).json()) as {
    versions: { id: string }[];
  };
  return { file, older: page.versions.at(-1)!.id };
}

const file = async (n: number): Promise<Ctx> => {
  const path = `m/${n}/f.txt`;
  await put(path, "hello");
  return { file: path };
};

/** What a memory-tool command answered: "ok", or the wire code its error text starts with. */
async function memory(token: string, json: Record<string, unknown>): Promise<Outcome> {
  const res = await call("POST", `/object/${token}/memory`, { json });
  const text = await res.text();
  if (res.ok && !/^Error/.test(text)) return "ok";
  return /forbidden/.test(text) ? "forbidden" : `failed: ${res.status} ${text.slice(0, 200)}`;
}

/** A Cap'n Web call over one HTTP batch: "ok", or the refusal code in the rejection. */
async function rpc(token: string, method: string, args: unknown[]): Promise<Outcome> {
  const body = [JSON.stringify(["push", ["pipeline", 0, [method], args]]), JSON.stringify(["pull", 1])].join("\n");
  const res = await call("POST", `/object/${token}/rpc`, { body });
  const text = await res.text();
  if (!/"reject"/.test(text)) return res.ok ? "ok" : `status ${res.status}`;
  return /forbidden/.test(text) ? "forbidden" : `rejected: ${text.slice(0, 200)}`;
}

/** An MCP tool call: "ok", or "forbidden" when the tool is not offered to this cap or refused it. */
async function mcp(token: string, name: string, args: Record<string, unknown>): Promise<Outcome> {
  const res = await call("POST", `/object/${token}/mcp`, {
    headers: { accept: "application/json, text/event-stream" },
    json: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } },
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

async function mcpTools(token: string): Promise<string[]> {
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

const ops: Op[] = [
  // ---- HTTP ----
  { name: "GET /file", needs: ["read"], prepare: file, act: (t, c) => http(t, "GET", `/file${q(c.file)}`) },
  {
    name: "PUT /file",
    needs: ["write"],
    prepare: async (n) => ({ file: `m/${n}/new.txt` }),
    act: (t, c) => http(t, "PUT", `/file${q(c.file)}`, { body: "new" }),
  },
  { name: "DELETE /file", needs: ["delete"], prepare: file, act: (t, c) => http(t, "DELETE", `/file${q(c.file)}`) },
  {
    name: "GET /stat",
    needs: ["read", "list"],
    any: true,
    prepare: file,
    act: (t, c) => http(t, "GET", `/stat${q(c.file)}`),
  },
  {
    name: "GET /list",
    needs: ["list"],
    prepare: file,
    act: (t, c) => http(t, "GET", `/list${q(c.file.replace(/f\.txt$/, ""))}`),
  },
  {
    name: "POST /move",
    needs: ["write", "delete"],
    prepare: file,
    act: (t, c) => http(t, "POST", "/move", { json: { from: c.file, to: `${c.file}.moved` } }),
  },
  {
    name: "POST /subdir",
    needs: ["subdir"],
    prepare: file,
    act: (t, c) => http(t, "POST", "/subdir", { json: { path: c.file.replace(/\/f\.txt$/, "") } }),
  },
  { name: "GET /children", needs: ["subdir"], act: (t) => http(t, "GET", "/children") },
  { name: "GET /tree", needs: ["subdir"], act: (t) => http(t, "GET", "/tree") },
  {
    name: "GET /versions",
    needs: ["read"],
    prepare: versioned,
    act: (t, c) => http(t, "GET", `/versions${q(c.file)}`),
  },
  {
    name: "GET /versions/:id",
    needs: ["read"],
    prepare: versioned,
    act: (t, c) => http(t, "GET", `/versions/${c.older}`),
  },
  {
    name: "POST /versions/:id/restore",
    needs: ["read", "write"],
    prepare: versioned,
    act: (t, c) => http(t, "POST", `/versions/${c.older}/restore`),
  },
  {
    name: "POST /versions/:id/redact",
    needs: ["delete"],
    prepare: versioned,
    act: (t, c) => http(t, "POST", `/versions/${c.older}/redact`),
  },
  { name: "GET /watch", needs: ["read"], act: (t) => http(t, "GET", "/watch") },
  // ---- memory tool ----
  {
    name: "memory view (file)",
    needs: ["read"],
    prepare: file,
    act: (t, c) => memory(t, { command: "view", path: `/memories/${c.file}` }),
  },
  {
    name: "memory view (folder)",
    needs: ["list"],
    prepare: file,
    act: (t, c) => memory(t, { command: "view", path: `/memories/${c.file.replace(/\/f\.txt$/, "")}` }),
  },
  {
    name: "memory create",
    needs: ["write"],
    prepare: async (n) => ({ file: `m/${n}/created.txt` }),
    act: (t, c) => memory(t, { command: "create", path: `/memories/${c.file}`, file_text: "made" }),
  },
  {
    name: "memory str_replace",
    needs: ["read", "write"],
    prepare: file,
    act: (t, c) => memory(t, { command: "str_replace", path: `/memories/${c.file}`, old_str: "hello", new_str: "bye" }),
  },
  {
    name: "memory insert",
    needs: ["read", "write"],
    prepare: file,
    act: (t, c) => memory(t, { command: "insert", path: `/memories/${c.file}`, insert_line: 0, insert_text: "top\n" }),
  },
  {
    name: "memory delete",
    needs: ["delete"],
    also: ["list"],
    prepare: file,
    act: (t, c) => memory(t, { command: "delete", path: `/memories/${c.file}` }),
  },
  {
    name: "memory rename",
    needs: ["write", "delete"],
    also: ["list"],
    prepare: file,
    act: (t, c) => memory(t, { command: "rename", old_path: `/memories/${c.file}`, new_path: `/memories/${c.file}.r` }),
  },
  // ---- RPC ----
  { name: "rpc read", needs: ["read"], prepare: file, act: (t, c) => rpc(t, "readText", [c.file]) },
  {
    name: "rpc write",
    needs: ["write"],
    prepare: async (n) => ({ file: `m/${n}/rpc.txt` }),
    act: (t, c) => rpc(t, "write", [c.file, "x"]),
  },
  { name: "rpc delete", needs: ["delete"], prepare: file, act: (t, c) => rpc(t, "delete", [c.file]) },
  {
    name: "rpc move",
    needs: ["write", "delete"],
    prepare: file,
    act: (t, c) => rpc(t, "move", [c.file, `${c.file}.m`]),
  },
  { name: "rpc stat", needs: ["read", "list"], any: true, prepare: file, act: (t, c) => rpc(t, "stat", [c.file]) },
  {
    name: "rpc list",
    needs: ["list"],
    prepare: file,
    act: (t, c) => rpc(t, "list", [c.file.replace(/\/f\.txt$/, "")]),
  },
  {
    name: "rpc subdir",
    needs: ["subdir"],
    prepare: file,
    act: (t, c) => rpc(t, "subdir", [c.file.replace(/\/f\.txt$/, "")]),
  },
  { name: "rpc children", needs: ["subdir"], act: (t) => rpc(t, "children", []) },
  { name: "rpc versions", needs: ["read"], prepare: versioned, act: (t, c) => rpc(t, "versions", [c.file]) },
  { name: "rpc readVersion", needs: ["read"], prepare: versioned, act: (t, c) => rpc(t, "readVersion", [c.older]) },
  { name: "rpc restore", needs: ["read", "write"], prepare: versioned, act: (t, c) => rpc(t, "restore", [c.older]) },
  { name: "rpc redact", needs: ["delete"], prepare: versioned, act: (t, c) => rpc(t, "redact", [c.older]) },
  // ---- MCP ----
  {
    name: "mcp read_text_file",
    needs: ["read"],
    prepare: file,
    act: (t, c) => mcp(t, "read_text_file", { path: c.file }),
  },
  { name: "mcp read_file", needs: ["read"], prepare: file, act: (t, c) => mcp(t, "read_file", { path: c.file }) },
  {
    name: "mcp read_multiple_files",
    needs: ["read"],
    prepare: file,
    act: (t, c) => mcp(t, "read_multiple_files", { paths: [c.file] }),
  },
  {
    name: "mcp read_media_file",
    needs: ["read"],
    prepare: file,
    act: (t, c) => mcp(t, "read_media_file", { path: c.file }),
  },
  {
    name: "mcp directory_tree",
    needs: ["list"],
    prepare: file,
    act: (t, c) => mcp(t, "directory_tree", { path: c.file.replace(/\/f\.txt$/, "") }),
  },
  {
    name: "mcp list_directory_with_sizes",
    needs: ["list"],
    prepare: file,
    act: (t, c) => mcp(t, "list_directory_with_sizes", { path: c.file.replace(/\/f\.txt$/, "") }),
  },
  {
    name: "mcp search_files",
    needs: ["list"],
    prepare: file,
    act: (t, c) => mcp(t, "search_files", { path: c.file.replace(/\/f\.txt$/, ""), pattern: "*.txt" }),
  },
  {
    name: "mcp write_file",
    needs: ["write"],
    prepare: async (n) => ({ file: `m/${n}/mcp.txt` }),
    act: (t, c) => mcp(t, "write_file", { path: c.file, content: "x" }),
  },
  {
    name: "mcp edit_file",
    needs: ["read", "write"],
    prepare: file,
    act: (t, c) => mcp(t, "edit_file", { path: c.file, edits: [{ oldText: "hello", newText: "bye" }] }),
  },
  { name: "mcp delete_file", needs: ["delete"], prepare: file, act: (t, c) => mcp(t, "delete_file", { path: c.file }) },
  {
    name: "mcp move_file",
    needs: ["write", "delete"],
    prepare: file,
    act: (t, c) => mcp(t, "move_file", { source: c.file, destination: `${c.file}.m` }),
  },
  {
    name: "mcp get_file_info",
    needs: ["read", "list"],
    any: true,
    prepare: file,
    act: (t, c) => mcp(t, "get_file_info", { path: c.file }),
  },
  {
    name: "mcp list_directory",
    needs: ["list"],
    prepare: file,
    act: (t, c) => mcp(t, "list_directory", { path: c.file.replace(/\/f\.txt$/, "") }),
  },
  {
    name: "mcp create_directory",
    needs: ["write"],
    prepare: async (n) => ({ file: `m/${n}/dir` }),
    act: (t, c) => mcp(t, "create_directory", { path: c.file }),
  },
  {
    name: "mcp create_subdir_cap",
    needs: ["subdir"],
    prepare: file,
    act: (t, c) => mcp(t, "create_subdir_cap", { path: c.file.replace(/\/f\.txt$/, "") }),
  },
  {
    name: "mcp list_versions",
    needs: ["read"],
    prepare: versioned,
    act: (t, c) => mcp(t, "list_versions", { path: c.file }),
  },
  {
    name: "mcp restore_version",
    needs: ["read", "write"],
    prepare: versioned,
    act: (t, c) => mcp(t, "restore_version", { versionId: c.older }),
  },
];

/** Everything a refused operation must leave as it was, as the root sees it. */
async function snapshot(ctx: Ctx | undefined): Promise<unknown> {
  const listing = await (await call("GET", `/object/${root.token}/list${q("")}&depth=0`)).json();
  const tree = await (await call("GET", `/object/${root.token}/tree`)).json();
  const versions = ctx?.older ? await (await call("GET", `/object/${root.token}/versions${q(ctx.file)}`)).json() : null;
  const older = ctx?.older ? (await call("GET", `/object/${root.token}/versions/${ctx.older}`)).status : null;
  return { listing, tree, versions, older };
}

/** The caps that must be refused: each lacks one needed right (for `any`, all of them) and holds every other. */
function lacking(op: Op): Right[][] {
  const missing = op.any ? [op.needs] : op.needs.map((r) => [r]);
  return missing.map((gone) => RIGHTS.filter((r) => !gone.includes(r)));
}

/** The caps that must succeed: exactly what is needed (for `any`, each one alone). */
function sufficient(op: Op): Right[][] {
  const sets = op.any ? op.needs.map((r) => [r]) : [op.needs];
  return sets.map((set) => RIGHTS.filter((r) => set.includes(r) || op.also?.includes(r)));
}

beforeAll(async () => {
  const minted = await mintRoot(`rights-matrix/${Date.now()}/`);
  root = cap(minted.token);
  expect([...minted.rights].sort()).toEqual([...RIGHTS].sort());
});

describe("the rights matrix", () => {
  for (const op of ops) {
    it(`${op.name} needs ${op.needs.join(op.any ? " or " : " and ")}`, async () => {
      for (const rights of lacking(op)) {
        const token = await capWith(rights);
        const ctx = await op.prepare?.(++counter);
        const before = await snapshot(ctx);
        expect(await op.act(token, ctx ?? { file: "" }), `${op.name} with ${rights.join(",")}`).toBe("forbidden");
        expect(await snapshot(ctx), `${op.name} with ${rights.join(",")} changed something`).toEqual(before);
      }
      for (const rights of sufficient(op)) {
        const token = await capWith(rights);
        const ctx = await op.prepare?.(++counter);
        expect(await op.act(token, ctx ?? { file: "" }), `${op.name} with ${rights.join(",")}`).toBe("ok");
      }
    });
  }

  it("MCP offers each tool exactly to the caps holding what it needs", async () => {
    for (const op of ops.filter((o) => o.name.startsWith("mcp "))) {
      const tool = op.name.slice(4);
      for (const rights of lacking(op))
        expect(await mcpTools(await capWith(rights)), rights.join(",")).not.toContain(tool);
      for (const rights of sufficient(op))
        expect(await mcpTools(await capWith(rights)), rights.join(",")).toContain(tool);
    }
  });

  it("revoking a child (DELETE /children/:id, /tree/:id) needs subdir", async () => {
    for (const route of ["children", "tree"]) {
      const without = await capWith(RIGHTS.filter((r) => r !== "subdir"));
      const holder = await capWith(["subdir"]);
      // Not its child, but the right is judged before the id: refused all the same, the victim untouched.
      const victim = await child(root, { path: "", rights: ["read"] });
      const before = await snapshot(undefined);
      expect(await http(without, "DELETE", `/${route}/${victim.minted.id}`)).toBe("forbidden");
      expect(await snapshot(undefined)).toEqual(before);
      expect((await victim.info()).status).toBe(200);
      const own = await child(cap(holder), { path: "" });
      expect(await http(holder, "DELETE", `/${route}/${own.minted.id}`)).toBe("ok");
      expect((await own.info()).status).toBe(404);
    }
  });
});
