/**
 * The search in steps: cut anywhere, it finds what a plain scan finds, and
 * run in turns it lets a timer armed before it fire before it ends (KMP over
 * 1 MiB was one synchronous call of tens of ms, holding every other request).
 */
import { describe, expect, it } from "vitest";
import { runAtOnce } from "../shared/in-turns.ts";
import { ticksDuring } from "../test/turn-counter.ts";
import {
  firstMatches,
  firstMatchesInTurns,
  firstMatchSteps,
  forEachMatch,
  forEachMatchInTurns,
} from "./text-search.ts";

function seeded(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
}

/** Every occurrence by brute force: overlapping, or each search starting past the last match. */
function reference(text: string, needle: string, overlapping: boolean): number[] {
  const out: number[] = [];
  for (let at = 0; at + needle.length <= text.length; ) {
    if (text.startsWith(needle, at)) {
      out.push(at);
      at += overlapping ? 1 : needle.length;
    } else at++;
  }
  return out;
}

/** A needle made of a slice of the text (so it occurs), sometimes changed; over 250 characters half the time (KMP). */
function randomCase(random: () => number): { text: string; needle: string } {
  const unit = "ab".repeat(1 + Math.floor(random() * 3));
  const text = Array.from({ length: 300 + Math.floor(random() * 900) }, () =>
    random() < 0.9 ? unit[Math.floor(random() * unit.length)] : "c",
  ).join("");
  const length = random() < 0.5 ? 1 + Math.floor(random() * 8) : 251 + Math.floor(random() * 200);
  const from = Math.floor(random() * Math.max(1, text.length - length));
  let needle = text.slice(from, from + length) || "a";
  if (random() < 0.3) needle = `${needle.slice(0, -1)}a`;
  return { text, needle };
}

describe("the search cut in steps finds the same matches", () => {
  it("random texts and needles, steps of a few characters, overlapping or not", () => {
    const random = seeded(5);
    for (let i = 0; i < 400; i++) {
      const { text, needle } = randomCase(random);
      const overlapping = random() < 0.5;
      const limit = [1, 2, 5, 1000][Math.floor(random() * 4)]!;
      const step = 1 + Math.floor(random() * 13);
      const expected = reference(text, needle, overlapping).slice(0, limit);
      expect(firstMatches(text, needle, limit, overlapping)).toEqual(expected);
      expect(runAtOnce(firstMatchSteps(text, needle, limit, overlapping, step))).toEqual(expected);
    }
  });

  it("run in turns: the same matches, and forEachMatch stops where it is told", async () => {
    const random = seeded(9);
    for (let i = 0; i < 10; i++) {
      const { text, needle } = randomCase(random);
      expect(await firstMatchesInTurns(text, needle, 1000, true, 400)).toEqual(reference(text, needle, true));
      const seen: number[] = [];
      await forEachMatchInTurns(text, needle, false, (at) => seen.push(at) < 3, 300);
      const sync: number[] = [];
      forEachMatch(text, needle, false, (at) => sync.push(at) < 3);
      expect(seen).toEqual(sync);
    }
  });
});

describe("the search takes turns with other tasks", () => {
  it("a 1 MiB needle in a 1 MiB text (KMP): a timer armed before it fires before it ends", async () => {
    const text = Array.from({ length: 100_000 }, (_, i) => `line ${i}\n`).join("");
    let found: number[] = [];
    const ticks = await ticksDuring(async () => {
      found = await firstMatchesInTurns(text, text, 2);
    });
    expect(found).toEqual([0]);
    // The failure table and the scan, each cut every 128 Ki characters.
    expect(ticks).toBeGreaterThanOrEqual(10);
  });
});
