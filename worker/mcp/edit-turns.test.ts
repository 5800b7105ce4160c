/**
 * edit_file on a large file gives the runtime turns between its long
 * synchronous steps (search, diff, write): rewriting every line of a 1 MiB
 * file ran them back to back, tens of ms each, while a read on another cap
 * waited (reliability/hostile-requests.ts). Turns are counted, not timed: a
 * zero timer armed when the file is read ticks once per turn until the write.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { describe, expect, it } from "vitest";
import type { CapObject } from "../../durable-objects/cap-object.ts";
import { refusal } from "../../shared/refusals.ts";
import { failed, ok } from "../../shared/result.ts";
import { createCapMcpServer } from "./mcp-server.ts";

const lines = (n: number, word: string) => Array.from({ length: n }, (_, i) => `${word} ${i}\n`).join("");

describe("edit_file takes turns with other requests", () => {
  it("between reading, searching, diffing and writing a 1 MiB file", async () => {
    let text = lines(100_000, "line");
    let turns = 0;
    let ticking = false;
    let turnsBeforeWrite = -1;
    const tick = () => {
      turns++;
      if (ticking) setTimeout(tick, 0);
    };
    const files = {
      readText: async () => {
        ticking = true;
        setTimeout(tick, 0);
        return ok({ text, etag: "v1" });
      },
      writeText: async (_path: string, next: string) => {
        turnsBeforeWrite = turns;
        ticking = false;
        text = next;
        return ok({ created: false, size: next.length, etag: "v2", sha256: "s" });
      },
      stat: async () => failed(refusal("notFound")),
      list: async () => failed(refusal("notFound")),
      delete: async () => failed(refusal("notFound")),
      move: async () => failed(refusal("notFound")),
      readBytes: async () => failed(refusal("notFound")),
      checkFolder: async () => failed(refusal("notFound")),
    };
    const server = createCapMcpServer({ files, cap: {} as DurableObjectStub<CapObject>, origin: "http://vault.test" }, [
      "read",
      "write",
    ]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "t", version: "1" });
    await client.connect(clientSide);
    try {
      const result = (await client.callTool({
        name: "edit_file",
        arguments: { path: "f.md", edits: [{ oldText: lines(100_000, "line"), newText: lines(100_000, "LINE") }] },
      })) as { isError?: boolean };
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
      await server.close();
    }
    expect(text).toBe(lines(100_000, "LINE"));
    // A turn before the search, the diff and the write (3), and inside the search and the diff every
    // 128 Ki characters of work (KMP over 2 × 1 MiB, four passes and two blocks of the diff): dozens.
    expect(turnsBeforeWrite).toBeGreaterThanOrEqual(20);
  });
});
