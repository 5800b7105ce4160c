import { expect } from "vitest";
import { call } from "./vault.ts";

/** One change as a watcher receives it (SSE `data`, or a WebSocket message). */
export interface WatchEvent {
  path: string;
  operation: string;
  size: number | null;
  actor: string;
  version: string;
}

const since = (after: string) => (after ? `?since=${after}` : "");

/** Opens a cap's SSE change feed and reads it frame by frame: waits on the stream itself, never on a clock. */
export async function sseWatch(token: string, after = "") {
  const res = await call("GET", `/object/${token}/watch${since(after)}`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/event-stream");
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  return {
    /** The next frame's event name and parsed data, or null once the stream ended. */
    async next(): Promise<{ event: string; data: unknown } | null> {
      for (;;) {
        const end = buffered.indexOf("\n\n");
        if (end >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (frame.startsWith(":")) continue; // a comment
          const event = /^event: (.*)$/m.exec(frame)?.[1] ?? "message";
          return { event, data: JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) };
        }
        const { value, done } = await reader.read();
        if (done) return null;
        buffered += decoder.decode(value, { stream: true });
      }
    },
    /** The next change, failing if the stream sent anything else or ended. */
    async event(): Promise<WatchEvent> {
      const next = await this.next();
      expect(next?.event).toBe("message");
      return next!.data as WatchEvent;
    },
    close: () => reader.cancel(),
  };
}

/** Opens a cap's WebSocket watcher and reads it message by message: waits on the socket, never on a clock. */
export async function socketWatch(token: string, after = "") {
  return socketReader(
    await call("GET", `/object/${token}/watch${since(after)}`, { headers: { Upgrade: "websocket" } }),
  );
}

/** A WebSocket upgrade's answer (from the worker or a root's journal), read message by message in order. */
export function socketReader(res: Response) {
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  ws.accept();
  const queue: ({ data: unknown } | { closed: number })[] = [];
  let wake = () => {};
  ws.addEventListener("message", (e) => {
    queue.push({ data: JSON.parse(e.data as string) });
    wake();
  });
  ws.addEventListener("close", (e) => {
    queue.push({ closed: e.code });
    wake();
  });
  return {
    ws,
    async next(): Promise<{ data: unknown } | { closed: number }> {
      while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      return queue.shift()!;
    },
    /** The next change, failing if the socket closed instead. */
    async event(): Promise<WatchEvent> {
      const next = await this.next();
      expect(next).toHaveProperty("data");
      return (next as { data: WatchEvent }).data;
    },
    close: () => ws.close(),
  };
}
