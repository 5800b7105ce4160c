import { describe, expect, it } from "vitest";
import { SLICE_BYTES, slicedBody } from "./sliced-body.ts";

/** The stream's chunks, and how many pauses came before each (a pause between two chunks shows as a step). */
async function drain(bytes: Uint8Array): Promise<{ chunks: Uint8Array[]; pausesBefore: number[] }> {
  let pauses = 0;
  const chunks: Uint8Array[] = [];
  const pausesBefore: number[] = [];
  for await (const chunk of slicedBody(bytes, async () => void pauses++)) {
    chunks.push(chunk);
    pausesBefore.push(pauses);
  }
  return { chunks, pausesBefore };
}

describe("slicedBody: a body made in memory, handed on a slice per turn", () => {
  it("hands on every byte in order, in slices, with a pause between each two", async () => {
    const size = 3 * SLICE_BYTES + 7;
    const bytes = Uint8Array.from({ length: size }, (_, i) => i % 251);
    const { chunks, pausesBefore } = await drain(bytes);
    expect(chunks.map((c) => c.byteLength)).toEqual([SLICE_BYTES, SLICE_BYTES, SLICE_BYTES, 7]);
    expect(pausesBefore).toEqual([0, 1, 2, 3]);
    const joined = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      joined.set(c, at);
      at += c.byteLength;
    }
    expect(joined.every((b, i) => b === bytes[i])).toBe(true);
  });

  it("ends an empty body and a body of exactly one slice without a pause", async () => {
    expect((await drain(new Uint8Array(0))).chunks).toEqual([]);
    const one = await drain(new Uint8Array(SLICE_BYTES));
    expect(one.chunks.map((c) => c.byteLength)).toEqual([SLICE_BYTES]);
    expect(one.pausesBefore).toEqual([0]);
  });
});
