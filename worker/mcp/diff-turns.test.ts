/**
 * The diff in steps: cut anywhere, it gives the diff the uncut code gives, and
 * run in turns it lets a timer armed before it fire before it ends (the old
 * diff was one synchronous call: tens of ms on 1 MiB while every other
 * request on workerd's thread waited).
 */
import { describe, expect, it } from "vitest";
import { runAtOnce } from "../../shared/in-turns.ts";
import { ticksDuring } from "../../test/turn-counter.ts";
import { lineDiff, lineDiffInTurns, lineDiffSteps } from "./line-diff.ts";
import { diffSteps, unifiedDiff, unifiedDiffInTurns } from "./unified-diff.ts";

function seeded(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
}

/** Lines over a small alphabet (long runs of equal lines, many matches), sometimes without a final newline. */
function randomText(random: () => number, maxLines: number): string {
  const n = Math.floor(random() * maxLines);
  const text = Array.from({ length: n }, () => "abcde"[Math.floor(random() * 5)]).join("\n");
  return random() < 0.8 && n > 0 ? `${text}\n` : text;
}

const lines = (n: number, word: string) => Array.from({ length: n }, (_, i) => `${word} ${i}\n`).join("");

describe("the diff cut in steps gives the same diff", () => {
  it("unified diffs of random texts, with steps of a few characters and a few steps of work", () => {
    const random = seeded(7);
    for (let i = 0; i < 400; i++) {
      const [before, after] = [randomText(random, 60), randomText(random, 60)];
      const steps = { chars: 1 + Math.floor(random() * 9), work: 1 + Math.floor(random() * 5) };
      expect(runAtOnce(diffSteps("f.md", before, after, steps))).toBe(unifiedDiff("f.md", before, after));
    }
    // Past the edit distance: the middle as one replaced block, built a slice at a time.
    const [before, after] = [lines(700, "old"), `${lines(700, "new")}end`];
    const whole = unifiedDiff("f.md", before, after);
    expect(whole).toContain("@@ -1,700 +1,701 @@\n-old 0\n");
    for (const chars of [1, 2, 5, 64])
      expect(runAtOnce(diffSteps("f.md", before, after, { chars, work: 3 }))).toBe(whole);
  });

  it("line diffs that give up (past the edit distance or work cap) give up the same way", () => {
    const random = seeded(11);
    const many = (n: number) => Array.from({ length: n }, () => `${Math.floor(random() * 3)}\n`);
    for (const [a, b] of [
      [many(3000), many(3000)],
      [many(1200), many(40)],
    ]) {
      const whole = lineDiff(a!, b!);
      expect(runAtOnce(lineDiffSteps(a!, b!, 97))).toEqual(whole);
    }
    const [a, b] = [many(1000).map((l) => `old ${l}`), many(1000).map((l) => `new ${l}`)];
    expect(lineDiff(a, b)).toBeNull();
    expect(runAtOnce(lineDiffSteps(a, b, 3))).toBeNull();
  });

  it("run in turns: the same answers", async () => {
    const random = seeded(3);
    for (let i = 0; i < 10; i++) {
      const [before, after] = [randomText(random, 200), randomText(random, 200)];
      expect(await unifiedDiffInTurns("f.md", before, after, { chars: 400, work: 300 })).toBe(
        unifiedDiff("f.md", before, after),
      );
    }
    const a = lines(2000, "x").split(/(?<=\n)/);
    const b = a.map((line, i) => (i % 7 === 0 ? "changed\n" : line));
    expect(await lineDiffInTurns(a, b, 5000)).toEqual(lineDiff(a, b));
  });
});

describe("the diff takes turns with other tasks", () => {
  it("rewriting every line of 1 MiB (the replaced block): a timer armed before it fires before it ends", async () => {
    const [before, after] = [lines(100_000, "line"), lines(100_000, "LINE")];
    let diff = "";
    const ticks = await ticksDuring(async () => {
      diff = await unifiedDiffInTurns("f.md", before, after);
    });
    expect(diff).toBe(unifiedDiff("f.md", before, after));
    // Every pass over the texts (ends, counts, the two blocks) is cut in steps of 128 Ki characters.
    expect(ticks).toBeGreaterThanOrEqual(10);
  });

  it("a line diff near its work cap", async () => {
    const a = Array.from({ length: 20_000 }, (_, i) => `${i % 2}\n`);
    const b = a.map((line, i) => (i % 50 === 0 ? "z\n" : line));
    let ops: unknown;
    const ticks = await ticksDuring(async () => {
      ops = await lineDiffInTurns(a, b);
    });
    expect(ops).toEqual(lineDiff(a, b));
    expect(ticks).toBeGreaterThanOrEqual(2);
  });
});
