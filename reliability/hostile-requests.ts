/**
 * Hostile requests against a running vault: each one is a single authorised
 * request no larger than the body limit that, before the work bounds, kept
 * the vault busy for seconds. While each runs, a cheap read on another cap is
 * repeated and timed; its worst latency over the idle latency is how long one
 * hostile caller delayed an unrelated one. A measurement, not a test.
 */
import http from "node:http";
import { ADMIN_CASES, type AdminSend } from "./hostile-admin.ts";
import { DAV_CASES, type DavSend, davSend } from "./hostile-dav.ts";
import { FOLDER_CASES, type HttpSend } from "./hostile-folders.ts";
import { RPC_CASES, type RpcSend, rpcSend } from "./hostile-rpc.ts";
import { SEARCH_CASES } from "./hostile-search.ts";

export interface HostileRow {
  case: string;
  /** Wall time of the hostile request. */
  ms: number;
  /** Worst latency of the cheap read on the other cap while it ran, minus the idle median. */
  cheapReadMaxDelayMs: number;
  /**
   * CPU the vault's processes spent while it ran (the cheap reads beside it
   * included, so an upper bound), or null where the vault is not ours to watch.
   */
  vaultCpuMs: number | null;
  /** What the vault answered: `ok`, or the refusal (first line). */
  outcome: string;
}

export interface HostileVault {
  /** The vault's origin. */
  url: string;
  /** A cap with every right; the hostile requests run on it, under a fresh folder. */
  capUrl: string;
  /** Another cap with read and write; the cheap read runs on it. */
  otherCapUrl: string;
  /** CPU spent so far by every process of the vault, in ms (see bench/proc-stats.ts). */
  cpuMs?: () => Promise<number>;
  /** The admin token, for the export and import rows (reliability/hostile-admin.ts); without it they are left out. */
  adminToken?: string;
}

interface HostileCase {
  name: string;
  /** Writes the files the request needs (and, for the admin rows, opens an import). */
  setup(put: Put, admin: AdminSend): Promise<void>;
  /** Sends the one hostile request; returns its outcome. */
  send(mcp: Send, memory: Send, rpc: RpcSend, dav: DavSend, http: HttpSend, admin: AdminSend): Promise<string>;
  /** Leaves the vault as it was, after the row is measured. */
  after?(admin: AdminSend): Promise<void>;
  /** Sent with the admin token: left out when the vault's is not known. */
  needsAdmin?: boolean;
}

type Put = (path: string, body: string) => Promise<void>;
type Send = (body: unknown) => Promise<string>;

const BACKTICKS = 150_000;
const NEWLINES = 120_000;
const NEEDLE_TEXT = 120_000;

const editCall = (path: string, edits: { oldText: string; newText: string }[]) => ({
  jsonrpc: "2.0",
  id: 1,
  method: "tools/call",
  params: { name: "edit_file", arguments: { path, edits } },
});

const CASES: HostileCase[] = [
  {
    name: `mcp edit_file next to a ${BACKTICKS / 1000} KB backtick run`,
    setup: (put) => put("ticks.md", `${"`".repeat(BACKTICKS)}\nend\n`),
    send: (mcp) => mcp(editCall("ticks.md", [{ oldText: "end", newText: "END" }])),
  },
  {
    name: "mcp edit_file with 2,000 edits on a 1 MiB file",
    setup: (put) =>
      put("many.md", Array.from({ length: 100_000 }, (_, i) => `k${String(i).padStart(8, "0")}`).join("\n")),
    send: (mcp) =>
      mcp(
        editCall(
          "many.md",
          Array.from({ length: 2_000 }, (_, i) => ({ oldText: `k${String(i * 50).padStart(8, "0")}`, newText: "x" })),
        ),
      ),
  },
  {
    name: "mcp edit_file, a needle that makes indexOf quadratic, 1 MiB file",
    setup: (put) => put("aaa.md", "a".repeat(1 << 20)),
    send: (mcp) => mcp(editCall("aaa.md", [{ oldText: `${"a".repeat(500)}b${"a".repeat(500)}`, newText: "x" }])),
  },
  {
    name: "mcp edit_file rewriting every line of a 1 MiB file (diff)",
    setup: (put) => put("rewrite.md", lines(100_000, "line")),
    send: (mcp) => mcp(editCall("rewrite.md", [{ oldText: lines(100_000, "line"), newText: lines(100_000, "LINE") }])),
  },
  {
    name: `memory insert of ${NEWLINES / 1000} KB of trailing newlines`,
    setup: (put) => put("insert.md", "top\n"),
    send: (_mcp, memory) =>
      memory({
        command: "insert",
        path: "/memories/insert.md",
        insert_line: 0,
        insert_text: `${"\n".repeat(NEWLINES)}x`,
      }),
  },
  {
    name: `memory str_replace, overlapping ${NEEDLE_TEXT / 2000} KB needle`,
    setup: (put) => put("needle.md", "a".repeat(NEEDLE_TEXT)),
    send: (_mcp, memory) =>
      memory({
        command: "str_replace",
        path: "/memories/needle.md",
        old_str: "a".repeat(NEEDLE_TEXT / 2),
        new_str: "b",
      }),
  },
  {
    name: "memory view of a 999,999-line file",
    setup: (put) => put("lines.md", "\n".repeat(999_998)),
    send: (_mcp, memory) => memory({ command: "view", path: "/memories/lines.md" }),
  },
  {
    name: "memory str_replace in a 2 MiB file of newlines",
    setup: (put) => put("nl.md", `${"\n".repeat(2 * 1024 * 1024 - 10)}x`),
    send: (_mcp, memory) => memory({ command: "str_replace", path: "/memories/nl.md", old_str: "x", new_str: "y" }),
  },
  {
    name: "mcp batch of 100 directory_tree calls on a 1,110-entry tree",
    async setup(put) {
      const paths = Array.from(
        { length: 1000 },
        (_, i) => `tree/d${Math.floor(i / 100)}/e${Math.floor(i / 10) % 10}/f${i % 10}.md`,
      );
      for (let i = 0; i < paths.length; i += 20) await Promise.all(paths.slice(i, i + 20).map((p) => put(p, "x")));
    },
    send: (mcp) => mcp(treeBatch(100)),
  },
  {
    name: "mcp write_file of 2 MiB (storage alone, for reference)",
    setup: async () => undefined,
    send: (mcp) =>
      mcp({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "write_file", arguments: { path: "big.md", content: "w".repeat(2 * 1024 * 1024) } },
      }),
  },
  {
    // The twin of the binding's 64 MiB row (hostile-binding.ts), and of the R2 floor's (hostile-floor.ts).
    name: "PUT /file of 64 MiB over HTTP (storage alone, for reference)",
    setup: async () => undefined,
    send: (_mcp: Send, _memory: Send, _rpc: RpcSend, _dav: DavSend, http: HttpSend) =>
      http("PUT", "/file?path=big64.bin", "w".repeat(64 * 1024 * 1024)),
  },
  {
    name: "memory view of a 50,000-line file (the most one view numbers)",
    setup: (put) => put("view.md", lines(50_000, "line").slice(0, -1)),
    send: (_mcp, memory) => memory({ command: "view", path: "/memories/view.md" }),
  },
  {
    name: "mcp batch of 20 directory_tree calls on the same tree",
    setup: async () => undefined,
    send: (mcp) => mcp(treeBatch(20)),
  },
  {
    name: "mcp batch of 20 read_multiple_files calls of 100 paths each",
    async setup(put) {
      for (let i = 0; i < 100; i += 20)
        await Promise.all(Array.from({ length: 20 }, (_, j) => put(`many/f${i + j}.md`, "x")));
    },
    send: (mcp) =>
      mcp(toolBatch(20, "read_multiple_files", { paths: Array.from({ length: 100 }, (_, i) => `many/f${i}.md`) })),
  },
  {
    name: "mcp batch of 20 read_media_file calls of an 8 MiB image",
    setup: (put) => put("big.png", "p".repeat(8 * 1024 * 1024)),
    send: (mcp) => mcp(toolBatch(20, "read_media_file", { path: "big.png" })),
  },
];

function toolBatch(calls: number, name: string, args: Record<string, unknown>) {
  return Array.from({ length: calls }, (_, id) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  }));
}

CASES.push(...RPC_CASES.map((c) => ({ ...c, send: (_mcp: Send, _memory: Send, rpc: RpcSend) => c.send(rpc) })));
CASES.push(
  ...DAV_CASES.map((c) => ({ ...c, send: (_mcp: Send, _memory: Send, _rpc: RpcSend, dav: DavSend) => c.send(dav) })),
);
CASES.push(
  ...FOLDER_CASES.map((c) => ({
    ...c,
    send: (_mcp: Send, _memory: Send, _rpc: RpcSend, _dav: DavSend, http: HttpSend) => c.send(http),
  })),
);
CASES.push(
  ...SEARCH_CASES.map((c) => ({
    ...c,
    send: (_mcp: Send, _memory: Send, _rpc: RpcSend, _dav: DavSend, http: HttpSend) => c.send(http),
  })),
);

CASES.push(
  ...ADMIN_CASES.map((c) => ({
    name: c.name,
    needsAdmin: true,
    setup: (put: Put, admin: AdminSend) => c.setup(admin, put),
    send: async (_mcp: Send, _memory: Send, _rpc: RpcSend, _dav: DavSend, _http: HttpSend, admin: AdminSend) => {
      const answer = await c.send(admin);
      return answer.status < 300 ? "ok" : `HTTP ${answer.status}: ${answer.text.replace(/\s+/g, " ").slice(0, 120)}`;
    },
    ...(c.after ? { after: c.after } : {}),
  })),
);

function treeBatch(calls: number) {
  return Array.from({ length: calls }, (_, id) => ({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "directory_tree", arguments: { path: "tree", maxDepth: 10 } },
  }));
}

/**
 * Runs every hostile case in turn and times the cheap read beside it.
 *
 * @example
 * const rows = await hostileRequests({ url: vault.url, capUrl: vault.rootCapUrl, otherCapUrl });
 * console.table(rows);
 */
export async function hostileRequests(
  vault: HostileVault,
  onRow: (row: HostileRow) => void = () => undefined,
): Promise<HostileRow[]> {
  const base = `hostile-${crypto.randomUUID().slice(0, 8)}`;
  const cap = await subdirCap(vault.capUrl, base);
  const put: Put = async (path, body) => {
    const answer = await request("PUT", `${cap}/file?path=${encodeURIComponent(path)}`, body);
    if (answer.status >= 300) throw new Error(`setup write of ${path} failed: ${answer.status}`);
  };
  const mcp: Send = (body) =>
    send(`${cap}/mcp`, body, { accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" });
  const memory: Send = (body) => send(`${cap}/memory`, body, {});
  const rpc = rpcSend(cap, (url, body) => request("POST", url, body));
  const dav = davSend(cap, request);
  const capHttp: HttpSend = async (method, route, body) => {
    const answer = await request(method, `${cap}${route}`, body);
    return answer.status < 300 ? "ok" : `HTTP ${answer.status}: ${answer.text.replace(/\s+/g, " ").slice(0, 120)}`;
  };
  const admin: AdminSend = async (method, route, body) => {
    const answer = await request(method, `${vault.url}/admin${route}`, body, {
      authorization: `Bearer ${vault.adminToken}`,
      "content-type": "application/json",
    });
    return { status: answer.status, text: answer.text };
  };
  const cheapPath = `${base}-cheap.txt`;
  const cheapUrl = `${vault.otherCapUrl}/file?path=${encodeURIComponent(cheapPath)}`;
  if ((await request("PUT", cheapUrl, "cheap")).status >= 300)
    throw new Error("could not write the cheap file on the other cap");
  const cheapRead = async () => {
    const started = performance.now();
    const answer = await request("GET", cheapUrl);
    if (answer.status !== 200) throw new Error(`the cheap read answered ${answer.status}`);
    return performance.now() - started;
  };

  const rows: HostileRow[] = [];
  const chosen = CASES.filter((c) => hostileCaseChosen(c.name) && (!c.needsAdmin || vault.adminToken !== undefined));
  for (const hostile of chosen) {
    await hostile.setup(put, admin);
    const idle: number[] = [];
    for (let i = 0; i < 15; i++) idle.push(await cheapRead());
    const baseline = median(idle);
    let running = true;
    const cpuBefore = (await vault.cpuMs?.()) ?? null;
    const started = performance.now();
    const request = hostile.send(mcp, memory, rpc, dav, capHttp, admin).finally(() => {
      running = false;
    });
    let worst = 0;
    while (running) worst = Math.max(worst, await cheapRead());
    const outcome = await request;
    const ms = Math.round(performance.now() - started);
    const cpuAfter = (await vault.cpuMs?.()) ?? null;
    const row = {
      case: hostile.name,
      ms,
      cheapReadMaxDelayMs: Math.max(0, Math.round(worst - baseline)),
      vaultCpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore,
      outcome,
    };
    await hostile.after?.(admin);
    rows.push(row);
    onRow(row);
  }
  return rows;
}

/** RELIABILITY_HOSTILE_CASE=<text>,<text>: only the rows whose name holds one of them (to measure a few again). */
export function hostileCaseChosen(name: string): boolean {
  const only = process.env.RELIABILITY_HOSTILE_CASE;
  return only === undefined || only.split(",").some((part) => name.includes(part));
}

/** Mints a full-rights cap on a fresh folder, so fixtures stay apart from the caller's files. */
async function subdirCap(capUrl: string, path: string): Promise<string> {
  const answer = await request("POST", `${capUrl}/subdir`, JSON.stringify({ path }));
  if (answer.status !== 201) throw new Error(`could not mint a cap for the fixtures: ${answer.status}`);
  return (JSON.parse(answer.text) as { url: string }).url;
}

/** POSTs JSON; the outcome is `ok`, or the first refusal found in the answer. */
async function send(url: string, body: unknown, headers: Record<string, string>): Promise<string> {
  const answer = await request("POST", url, JSON.stringify(body), { "content-type": "application/json", ...headers });
  const text = answer.text;
  if (answer.status >= 300) return `HTTP ${answer.status}: ${text.slice(0, 120)}`;
  if (answer.headers["capvault-error-code"] !== undefined) return text.slice(0, 120).split("\n")[0]!;
  if (!url.endsWith("/mcp")) return "ok";
  const answers = [JSON.parse(text)].flat() as {
    result?: { isError?: boolean; content?: { text: string }[] };
    error?: { message: string };
  }[];
  const refused = answers.filter((a) => a.error !== undefined || a.result?.isError === true);
  if (refused.length === 0) return "ok";
  const first = refused[0]!;
  const why = first.error?.message ?? first.result?.content?.[0]?.text ?? "";
  return `${refused.length}/${answers.length} refused: ${why.slice(0, 100).split("\n")[0]}`;
}

/**
 * One HTTP request on a connection of its own. A pooled keep-alive
 * connection can be closed by the vault while a hostile request holds it
 * (fetch then fails with "other side closed"), and a retry would hide the
 * delay being measured.
 */
export function request(
  method: string,
  url: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = http.request(url, { method, agent: false, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          text: Buffer.concat(chunks).toString("utf8"),
        }),
      );
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

function lines(n: number, word: string): string {
  return Array.from({ length: n }, (_, i) => `${word} ${i}\n`).join("");
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
