import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type BenchContext, IN_FLIGHT } from "./bench-context.ts";
import { makeRow, type Row } from "./bench-row.ts";
import { get, put } from "./http-ops.ts";
import { leanFetch } from "./lean-http.ts";
import { interleaved, median, sequential, throughput } from "./stats.ts";

const PEER = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js");
/** The vault's own stdio bridge, `capvault mcp`, run as an MCP client config runs it. */
const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "cli", "capvault.ts");

async function readFileTool(client: Client, file: string): Promise<void> {
  const result = (await client.callTool({ name: "read_file", arguments: { path: file } })) as {
    content: { text?: string }[];
    isError?: boolean;
  };
  if (result.isError || result.content[0]?.text?.length !== 1024) throw new Error(`read_file ${file} failed`);
}

/**
 * MCP `read_file` of 1 KiB files through the disk cap's `/mcp` (official
 * client, Streamable HTTP) vs `@modelcontextprotocol/server-filesystem` over
 * stdio (official client) on the same folder: the way agents run both; and
 * the same reads through `capvault mcp`, the stdio bridge a client that
 * cannot speak HTTP runs (the cap in its environment, never its arguments).
 * Two rows measure the protocol's own cost inside the vault: a read_file
 * against the cap's own `GET /file` of the same file (the lean client, in
 * the same rounds), and the bridge against the HTTP endpoint it forwards to.
 */
export async function mcp(ctx: BenchContext): Promise<Row[]> {
  const { files, rounds, sequential: count, inFlightCalls } = ctx.size;
  const name = (i: number) => `mcp/f${i % files}`;
  for (let i = 0; i < files; i++) await put(`${ctx.vault.diskCapUrl}/file?path=${name(i)}`);

  const cap = new Client({ name: "capvault-bench", version: "1.0.0" });
  const peer = new Client({ name: "capvault-bench", version: "1.0.0" });
  const bridge = new Client({ name: "capvault-bench", version: "1.0.0" });
  try {
    // The lean client under the SDK's transport, as on every other latency row (lean-http.ts).
    await cap.connect(new StreamableHTTPClientTransport(new URL(`${ctx.vault.diskCapUrl}/mcp`), { fetch: leanFetch }));
    await peer.connect(
      new StdioClientTransport({ command: process.execPath, args: [PEER, ctx.vault.diskRoot], stderr: "ignore" }),
    );
    await bridge.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", CLI, "mcp"],
        env: { ...(process.env as Record<string, string>), CAPVAULT_CAP: ctx.vault.diskCapUrl },
        stderr: "ignore",
      }),
    );
    const capRead = (i: number) => readFileTool(cap, name(i));
    const bridgeRead = (i: number) => readFileTool(bridge, name(i));
    const peerRead = (i: number) => readFileTool(peer, path.join(ctx.vault.diskRoot, name(i)));
    const plainRead = (i: number) => get(`${ctx.vault.diskCapUrl}/file?path=${encodeURIComponent(name(i))}`);
    const many = await interleaved(rounds, {
      cap: () => throughput(inFlightCalls, IN_FLIGHT, capRead),
      peer: () => throughput(inFlightCalls, IN_FLIGHT, peerRead),
      bridge: () => throughput(inFlightCalls, IN_FLIGHT, bridgeRead),
    });
    const one = await interleaved(rounds, {
      cap: async () => median(await sequential(count, capRead)),
      peer: async () => median(await sequential(count, peerRead)),
      plain: async () => median(await sequential(count, plainRead)),
    });
    const common = { section: "mcp", floorName: "server-filesystem (stdio)" };
    return [
      makeRow({
        ...common,
        row: `MCP read_file 1 KiB, ${IN_FLIGHT} in flight`,
        unit: "calls/s",
        cap: many.cap,
        floor: many.peer,
        // Issue 25's ≥ 0.5× is for the stdio bridge: the next row.
        goal: null,
      }),
      makeRow({
        ...common,
        row: `MCP read_file 1 KiB through the stdio bridge, ${IN_FLIGHT} in flight`,
        unit: "calls/s",
        cap: many.bridge,
        floor: many.peer,
        goal: { on: "ratio", op: ">=", value: 0.5 },
      }),
      makeRow({
        ...common,
        row: "MCP read_file 1 KiB p50",
        unit: "ms",
        cap: one.cap,
        floor: one.peer,
        goal: { on: "cap", op: "<=", value: 1 },
      }),
      makeRow({
        section: "mcp",
        row: "MCP read_file 1 KiB p50 vs the cap's GET /file",
        unit: "ms",
        cap: one.cap,
        floor: one.plain,
        floorName: "the same disk cap's GET /file (lean client)",
      }),
      makeRow({
        section: "mcp",
        row: `MCP read_file 1 KiB through the stdio bridge vs the cap's HTTP /mcp, ${IN_FLIGHT} in flight`,
        unit: "calls/s",
        cap: many.bridge,
        floor: many.cap,
        floorName: "the cap's /mcp over Streamable HTTP",
      }),
    ];
  } finally {
    await Promise.allSettled([cap.close(), peer.close(), bridge.close()]);
  }
}
