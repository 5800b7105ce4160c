import type { Readable, Writable } from "node:stream";
import { writeOut } from "../cli-io.ts";
import { terminalSafe } from "../terminal-safe.ts";
import type { CapEndpoint, Forwarded } from "./cap-endpoint.ts";
import { errorAnswer, RPC } from "./json-rpc.ts";
import { stdinLines } from "./stdin-lines.ts";

/** Far above the endpoint's 4 MiB body limit (which answers for itself), only to bound the bridge's memory. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Messages forwarded at once; stdin is not read further until one finishes (back-pressure on the client). */
export const MAX_IN_FLIGHT = 8;

export interface BridgeStreams {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

/**
 * MCP over stdio to the client, one POST per message to the cap's endpoint.
 * Messages run concurrently (JSON-RPC matches answers by id) up to
 * MAX_IN_FLIGHT. When stdin ends, every message already read is still
 * answered before this returns: a client may write its last request and
 * close its end at once. stdout carries protocol only; diagnostics go to
 * stderr.
 */
export async function runBridge(endpoint: CapEndpoint, io: BridgeStreams): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let closed = false;
  // The client went away: stop reading, and never crash on EPIPE.
  io.stdout.on("error", () => {
    closed = true;
    io.stdin.destroy();
  });
  const send = async (value: unknown) => {
    if (!closed) await writeOut(io.stdout, `${JSON.stringify(value)}\n`).catch(() => undefined);
  };
  const handle = async (text: string) => {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return send(errorAnswer(null, { code: RPC.parseError, message: "Parse error: a line that is not JSON" }));
    }
    let outcome: Forwarded;
    try {
      outcome = await endpoint.forward(text, message);
    } catch (error) {
      outcome = { log: `internal error: ${error instanceof Error ? error.name : "unknown"}` };
    }
    // The vault's text, shown escaped: a client may show the bridge's stderr in a terminal or a log view.
    if (outcome.log !== undefined) io.stderr.write(`capvault mcp: ${terminalSafe(outcome.log)}\n`);
    if (outcome.answer !== undefined) await send(outcome.answer);
  };
  try {
    for await (const line of stdinLines(io.stdin, MAX_LINE_BYTES)) {
      if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
      const task =
        "text" in line
          ? handle(line.text)
          : send(
              errorAnswer(null, { code: RPC.parseError, message: `Parse error: a line over ${MAX_LINE_BYTES} bytes` }),
            );
      const tracked = task.finally(() => inFlight.delete(tracked));
      inFlight.add(tracked);
    }
  } catch {
    // stdin destroyed because stdout closed: nothing left to answer to.
  }
  await Promise.all(inFlight);
}
