/**
 * `NODE_OPTIONS=--experimental-websocket npx tsx bench/workerd-profile.ts [calls]`: CPU profiles of
 * workerd (the worker's and the cap objects' isolates) while an R2 cap and then a disk cap each serve `calls` plain reads of a
 * 1 KiB file, then `calls` MCP read_file calls of it, then `calls` 1 KiB writes to the R2 cap and `calls` to the
 * disk cap, then five 2 MiB PUTs, then the revocation of a 1 + 10 + 100 tree of caps. Starts workerd's
 * inspector through bench/workerd-inspector-hook.mjs and drives the Chrome DevTools protocol's Profiler
 * over a WebSocket. Prints the top frames by self time per phase and writes the .cpuprofile files
 * into /tmp. Sample counts, not wall times: they hold on a loaded machine.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import "../test/node/fetch-setup.ts";
import { startTestVault } from "../test/node/test-vault.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const calls = Number(process.argv[2] ?? 200);
const PORT = 9300 + Math.floor(Math.random() * 600);

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  samples?: number[];
}

/** One inspector target (an isolate) over the DevTools protocol. */
async function connect(wsUrl: string) {
  const ws = new WebSocket(wsUrl);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve);
    ws.addEventListener("error", reject);
  });
  let next = 1;
  const waiting = new Map<number, (v: unknown) => void>();
  ws.addEventListener("message", (e: MessageEvent) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
  });
  const send = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve) => {
      const id = next++;
      waiting.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { send, close: () => ws.close() };
}

const IDLE = new Set(["(idle)", "(root)", "(program)"]);

/** Samples in which the isolate ran JavaScript, the garbage collector or a native call (not idle). */
function busy(profile: Profile): number {
  return profile.nodes.reduce((n, node) => n + (IDLE.has(node.callFrame.functionName) ? 0 : (node.hitCount ?? 0)), 0);
}

function top(profile: Profile, n = 15): string[] {
  const self = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    total += hits;
    const f = node.callFrame;
    const name = `${f.functionName || "(anonymous)"} ${f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : ""}`;
    self.set(name, (self.get(name) ?? 0) + hits);
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([name, hits]) => `${((100 * hits) / total).toFixed(1).padStart(5)}%  ${hits.toString().padStart(5)}  ${name}`,
    );
}

const vault = await startTestVault({
  env: {
    NODE_OPTIONS: `--import=${pathToFileURL(path.join(HERE, "workerd-inspector-hook.mjs")).href}`,
    CAPVAULT_BENCH_WORKERD_INSPECTOR: String(PORT),
  },
});
try {
  const targets = (await (await fetch(`http://127.0.0.1:${PORT}/json/list`)).json()) as {
    title?: string;
    id?: string;
    webSocketDebuggerUrl?: string;
  }[];
  console.log(`inspector targets: ${targets.map((t) => t.title ?? t.id).join(", ")}`);
  const sessions = [];
  for (const t of targets) if (t.webSocketDebuggerUrl) sessions.push({ t, s: await connect(t.webSocketDebuggerUrl) });
  const file = `${vault.diskCapUrl}/file?path=profile.txt`;
  if (!(await fetch(file, { method: "PUT", body: "a".repeat(1024) })).ok) throw new Error("PUT failed");
  const r2File = `${vault.rootCapUrl}/file?path=profile.txt`;
  if (!(await fetch(r2File, { method: "PUT", body: "a".repeat(1024) })).ok) throw new Error("R2 PUT failed");
  const client = new Client({ name: "workerd-profile", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${vault.diskCapUrl}/mcp`)));
  const big = new Uint8Array(2 * 1024 * 1024).fill(0x62);
  const put = `${vault.rootCapUrl}/file?path=profile-big.bin`;
  const tree = { top: "" };
  const mintChild = async (parent: string) => {
    const res = await fetch(`${parent}/subdir`, { method: "POST", body: "{}" });
    if (res.status !== 201) throw new Error(`mint answered ${res.status}`);
    return ((await res.json()) as { url: string }).url;
  };
  const mintTree = async () => {
    tree.top = await mintChild(vault.rootCapUrl);
    for (let i = 0; i < 10; i++) {
      const child = await mintChild(tree.top);
      for (let j = 0; j < 10; j++) await mintChild(child);
    }
  };
  const phases: [string, number, () => Promise<void>, (() => Promise<void>)?][] = [
    ["r2-read", calls, async () => void (await (await fetch(r2File)).text())],
    ["disk-read", calls, async () => void (await (await fetch(file)).text())],
    [
      "mcp-read",
      calls,
      async () => void (await client.callTool({ name: "read_file", arguments: { path: "profile.txt" } })),
    ],
    [
      "r2-write-1KiB",
      calls,
      async () => void (await (await fetch(r2File, { method: "PUT", body: "b".repeat(1024) })).text()),
    ],
    [
      "disk-write-1KiB",
      calls,
      async () => void (await (await fetch(file, { method: "PUT", body: "b".repeat(1024) })).text()),
    ],
    ["r2-put-2MiB", 5, async () => void (await (await fetch(put, { method: "PUT", body: big })).text())],
    // A 1 + 10 + 100 tree is minted before the profile starts; only its revocation is profiled.
    ["revoke-111-caps", 1, async () => void (await (await fetch(tree.top, { method: "DELETE" })).text()), mintTree],
  ];
  for (const [phase, n, call, setup] of phases) {
    await setup?.();
    for (const { s } of sessions) {
      await s.send("Profiler.enable");
      await s.send("Profiler.setSamplingInterval", { interval: 200 });
      await s.send("Profiler.start");
    }
    for (let i = 0; i < n; i++) await call();
    for (const { t, s } of sessions) {
      const { profile } = (await s.send("Profiler.stop")) as { profile: Profile };
      if (!profile.nodes.some((node) => (node.hitCount ?? 0) > 0 && !IDLE.has(node.callFrame.functionName))) continue;
      const out = `/tmp/workerd-${phase}-${(t.title ?? "isolate").replace(/\W+/g, "_")}.cpuprofile`;
      await writeFile(out, JSON.stringify(profile));
      console.log(
        `\n== ${phase}, ${n} calls, ${busy(profile)} busy samples of 200 µs, isolate ${t.title ?? t.id} (${out})\n${top(profile).join("\n")}`,
      );
    }
  }
  await client.close();
  for (const { s } of sessions) s.close();
} finally {
  await vault.stop();
}
