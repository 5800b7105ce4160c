/**
 * The Cap'n Web rows of the hostile table (reliability/hostile-requests.ts):
 * raw batches and WebSocket sessions on `/object/<token>/rpc`, each one
 * request (or one session) that before the RPC bounds stalled every cap for
 * seconds. Messages are capnweb's wire format, sent as they are.
 */
import { Worker } from "node:worker_threads";

/** Sends raw capnweb messages on a cap; returns the outcome (`ok`, or how many calls were refused and why). */
export interface RpcSend {
  /** One HTTP batch. */
  batch(lines: string[]): Promise<string>;
  /** One WebSocket session: every message at once, then waits for an answer to each pull. */
  socket(lines: string[]): Promise<string>;
}

export interface RpcCase {
  name: string;
  setup(put: (path: string, body: string) => Promise<void>): Promise<void>;
  send(rpc: RpcSend): Promise<string>;
}

const push = (on: number, method: string, args: unknown[]) =>
  JSON.stringify(["push", ["pipeline", on, [method], args]]);
const pulls = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify(["pull", i + 1]));
/** `n` stat calls on the main cap, each pulled. */
const stats = (n: number) => [...Array.from({ length: n }, () => push(0, "stat", ["rpc.txt"])), ...pulls(n)];
/** `cap.subdir("").subdir("")…`, `n` deep, each link pulled. */
const chain = (n: number) => [...Array.from({ length: n }, (_, i) => push(i, "subdir", [""])), ...pulls(n)];
const fixture = (put: (path: string, body: string) => Promise<void>) => put("rpc.txt", "x");

export const RPC_CASES: RpcCase[] = [
  { name: "rpc batch of 1,500 stat calls", setup: fixture, send: (rpc) => rpc.batch(stats(1500)) },
  {
    name: "rpc batch of 250 stat calls (the most one batch runs)",
    setup: fixture,
    send: (rpc) => rpc.batch(stats(250)),
  },
  { name: "rpc batch, a subdir chain 1,400 deep", setup: fixture, send: (rpc) => rpc.batch(chain(1400)) },
  {
    name: "rpc batch, a subdir chain 16 deep (the most one batch mints)",
    setup: fixture,
    send: (rpc) => rpc.batch(chain(16)),
  },
  { name: "rpc WebSocket, 2,000 stat calls at once", setup: fixture, send: (rpc) => rpc.socket(stats(2000)) },
  { name: "rpc WebSocket, a subdir chain 2,000 deep", setup: fixture, send: (rpc) => rpc.socket(chain(2000)) },
];

/** The senders for one cap (`capUrl`), with `post` as the table's own one-connection HTTP request. */
export function rpcSend(
  capUrl: string,
  post: (url: string, body: string) => Promise<{ status: number; text: string }>,
): RpcSend {
  return {
    async batch(lines) {
      const answer = await post(`${capUrl}/rpc`, lines.join("\n"));
      if (answer.status >= 300) return `HTTP ${answer.status}: ${answer.text.slice(0, 120)}`;
      return outcome(answer.text.split("\n"));
    },
    async socket(lines) {
      // In a thread of its own: sending thousands of messages and reading their answers would otherwise
      // hold this process's event loop, and the cheap read timed beside it would be late by the client's work.
      const worker = new Worker(SOCKET_CLIENT, {
        eval: true,
        workerData: { url: `${capUrl.replace(/^http/, "ws")}/rpc`, lines },
      });
      try {
        const result = await new Promise<{ answers: string[]; closed: boolean; wanted: number }>((resolve, reject) => {
          worker.once("message", resolve);
          worker.once("error", reject);
        });
        const summary = outcome(result.answers);
        return result.closed ? `closed after ${result.answers.length}/${result.wanted} answers; ${summary}` : summary;
      } finally {
        await worker.terminate();
      }
    },
  };
}

/** `ok`, or `n/m refused: <first reason>` over the answers (`resolve` / `reject` messages). */
function outcome(lines: string[]): string {
  const answers = lines.filter((line) => line.startsWith('["resolve"') || line.startsWith('["reject"'));
  const refused = answers.filter((line) => line.startsWith('["reject"'));
  if (refused.length === 0) return "ok";
  const why = (JSON.parse(refused[0]!) as [string, number, [string, string, string]])[2][2];
  return `${refused.length}/${answers.length} refused: ${why}`;
}

/** The WebSocket client thread: sends every line at once, collects the answers to its pulls, posts them back. */
const SOCKET_CLIENT = `
const { parentPort, workerData } = require("node:worker_threads");
const { WebSocket } = require("undici");
const { url, lines } = workerData;
const wanted = lines.filter((line) => line.startsWith('["pull"')).length;
const answers = [];
let settled = false;
const finish = (closed) => {
  if (settled) return;
  settled = true;
  parentPort.postMessage({ answers, closed, wanted });
  socket.close();
};
const socket = new WebSocket(url);
socket.onopen = () => { for (const line of lines) socket.send(line); };
socket.onmessage = (event) => {
  const text = String(event.data);
  if (text.startsWith('["resolve"') || text.startsWith('["reject"')) answers.push(text);
  if (answers.length >= wanted) finish(false);
};
socket.onclose = () => finish(true);
socket.onerror = () => finish(true);
`;
