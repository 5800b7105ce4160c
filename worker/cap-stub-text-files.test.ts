/**
 * A text write of the MCP and memory tools, seen from the cap's object: the
 * body arrives in slices, and the runtime takes turns between them. Before,
 * it was one 2 MiB buffer, stored back to back while a read on another cap
 * waited ~150 ms (reliability/hostile-requests.ts). Turns are counted, not
 * timed: a zero timer that re-arms itself ticks once per turn.
 */
import { describe, expect, it } from "vitest";
import type { CapObject } from "../durable-objects/cap-object.ts";
import { ok } from "../shared/result.ts";
import { SLICE_BYTES } from "../shared/sliced-body.ts";
import { capStubTextFiles } from "./cap-stub-text-files.ts";

describe("capStubTextFiles.writeText", () => {
  it("hands a 2 MiB text to the cap's object in slices, with turns for others between them", async () => {
    const text = "w".repeat(2 * 1024 * 1024);
    const chunks: number[] = [];
    const turnsAt: number[] = [];
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setTimeout(tick, 0);
    };
    // Stands in for the object's RPC: reads the body as the object's storage would.
    const stub = {
      async writeFile(_path: string, body: ReadableStream<Uint8Array>, request: { length: number }) {
        setTimeout(tick, 0);
        for await (const chunk of body) {
          chunks.push(chunk.byteLength);
          turnsAt.push(turns);
        }
        ticking = false;
        return ok({ created: true, size: request.length, etag: "e", sha256: "s" });
      },
    } as unknown as DurableObjectStub<CapObject>;
    const written = await capStubTextFiles(stub).writeText("big.md", text);
    expect(written.ok).toBe(true);
    expect(chunks.reduce((a, b) => a + b, 0)).toBe(text.length);
    expect(Math.max(...chunks)).toBeLessThanOrEqual(SLICE_BYTES);
    // Another task ran between every two slices.
    for (let i = 1; i < turnsAt.length; i++) expect(turnsAt[i]).toBeGreaterThan(turnsAt[i - 1]!);
  });
});
