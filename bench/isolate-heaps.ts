/**
 * The memory each of workerd's isolates holds (its JavaScript heap and the
 * ArrayBuffers it keeps, `Runtime.getHeapUsage` over the DevTools protocol),
 * read through the inspector that bench/workerd-inspector-hook.mjs starts in
 * the bench's vault. RSS counts the whole workerd process: on the local
 * runtime that also holds Miniflare's R2 simulator (an isolate of its own)
 * and the runtime's native buffers, so an RSS row alone cannot say how much
 * of a large upload's memory is the vault's. Bench only.
 */
import { WebSocket } from "undici";
import { growthDuring } from "./proc-stats.ts";

/** Isolates by what the bench calls them, from their inspector titles. */
const ISOLATES: Record<string, RegExp> = {
  vault: /worker core:user:/,
  "R2 simulator": /worker r2:bucket$/,
};

interface Session {
  send(method: string): Promise<unknown>;
  close(): void;
}

function open(url: string): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    let next = 1;
    const waiting = new Map<number, (result: unknown) => void>();
    ws.addEventListener("message", (event) => {
      const msg = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
      if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result ?? null);
      if (msg.id !== undefined) waiting.delete(msg.id);
    });
    ws.addEventListener("error", () => reject(new Error(`inspector ${url} failed`)));
    ws.addEventListener("open", () =>
      resolve({
        send: (method) =>
          new Promise((answer) => {
            const id = next++;
            waiting.set(id, answer);
            ws.send(JSON.stringify({ id, method }));
          }),
        close: () => ws.close(),
      }),
    );
  });
}

export interface IsolateHeaps {
  /** MiB each named isolate holds now (JavaScript heap in use + ArrayBuffers). */
  sample(): Promise<Record<string, number>>;
  close(): void;
}

/** Sessions to the vault's isolates on the inspector at `port`. */
export async function isolateHeaps(port: number): Promise<IsolateHeaps> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    title?: string;
    webSocketDebuggerUrl?: string;
  }[];
  const sessions: [string, Session][] = [];
  for (const [name, title] of Object.entries(ISOLATES)) {
    const target = targets.find((t) => t.webSocketDebuggerUrl && title.test(t.title ?? ""));
    // A row that read nothing would print 0 MiB, which looks like a result.
    if (!target?.webSocketDebuggerUrl) throw new Error(`no ${name} isolate on workerd's inspector`);
    sessions.push([name, await open(target.webSocketDebuggerUrl)]);
  }
  return {
    async sample() {
      const out: Record<string, number> = {};
      for (const [name, session] of sessions) {
        const usage = (await session.send("Runtime.getHeapUsage")) as {
          usedSize?: number;
          backingStorageSize?: number;
        } | null;
        out[name] = ((usage?.usedSize ?? 0) + (usage?.backingStorageSize ?? 0)) / (1024 * 1024);
      }
      return out;
    },
    close: () => {
      for (const [, session] of sessions) session.close();
    },
  };
}

/** Runs `work` and returns how far each isolate's memory rose above what it held before (peak, MiB). */
export function heapGrowthDuring(heaps: IsolateHeaps, work: () => Promise<void>): Promise<Record<string, number>> {
  return growthDuring(() => heaps.sample(), work);
}
