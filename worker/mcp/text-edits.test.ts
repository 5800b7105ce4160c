import { describe, expect, it } from "vitest";
import { ticksDuring } from "../../test/turn-counter.ts";
import { applyEdits, applyEditsInTurns, MAX_EDIT_SEARCH_CHARS, MAX_EDITS } from "./text-edits.ts";

const MiB = 1024 * 1024;

describe("applyEdits on hostile input", () => {
  it(`refuses more than ${MAX_EDITS} edits, applying none`, () => {
    const text = Array.from({ length: 200 }, (_, i) => `k${i};`).join("");
    const edits = (n: number) => Array.from({ length: n }, (_, i) => ({ oldText: `k${i};`, newText: `K${i};` }));
    expect(applyEdits(text, edits(MAX_EDITS))).toMatchObject({ ok: true });
    expect(applyEdits(text, edits(MAX_EDITS + 1))).toEqual({
      ok: false,
      error: { code: "bad_request", message: `at most ${MAX_EDITS} edits per call; split them over several calls` },
    });
  });

  it("refuses edits whose searches add up past the budget (edits × file length)", () => {
    const perEdit = Math.floor(MAX_EDIT_SEARCH_CHARS / 8);
    const text = `${".".repeat(perEdit - 40)}${Array.from({ length: 9 }, (_, i) => `<${i}>`).join("")}`;
    const edits = Array.from({ length: 9 }, (_, i) => ({ oldText: `<${i}>`, newText: `[${i}]` }));
    expect(applyEdits(text, edits.slice(0, 8))).toMatchObject({ ok: true });
    const refused = applyEdits(text, edits);
    expect(refused).toMatchObject({ ok: false, error: { code: "bad_request" } });
    expect(!refused.ok && refused.error.message).toMatch(/^edit 9: these edits search more than \d+ characters in all/);
  });

  // V8's indexOf compares such a needle at nearly every offset (text × needle): minutes at this size.
  it("finds, or refuses, a long self-similar needle in linear time", { timeout: 20_000 }, () => {
    const half = "a".repeat(100_000);
    const needle = `${half}b${half}`;
    expect(applyEdits("a".repeat(2 * MiB), [{ oldText: needle, newText: "x" }])).toEqual({
      ok: false,
      error: { code: "bad_request", message: "edit 1: oldText does not appear verbatim in the file" },
    });
    const text = `${"a".repeat(MiB)}b${"a".repeat(MiB)}`;
    const replaced = applyEdits(text, [{ oldText: needle, newText: "x" }]);
    expect(replaced).toEqual({ ok: true, value: `${"a".repeat(MiB - 100_000)}x${"a".repeat(MiB - 100_000)}` });
    // A second occurrence overlapping the first is still a second one.
    const period = "ab".repeat(200);
    expect(applyEdits(`${period}ab`, [{ oldText: period, newText: "x" }])).toMatchObject({
      ok: false,
      error: { message: "edit 1: oldText appears more than once; include more surrounding text to make it unique" },
    });
  });
});

describe("applyEdits in turns", () => {
  it("gives what applyEdits gives on random edits, searched a few characters per step", async () => {
    let seed = 13;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const text = Array.from({ length: 2000 }, () => "abc\n"[Math.floor(random() * 4)]).join("");
    for (let i = 0; i < 30; i++) {
      // Slices of the text: short ones (native search, often repeated) and long ones (KMP, often unique).
      const edits = Array.from({ length: 1 + Math.floor(random() * 3) }, () => {
        const from = Math.floor(random() * 1500);
        const length = random() < 0.5 ? 2 + Math.floor(random() * 4) : 260 + Math.floor(random() * 200);
        return { oldText: text.slice(from, from + length), newText: "<x>" };
      });
      expect(await applyEditsInTurns(text, edits, 1 + Math.floor(random() * 700))).toEqual(applyEdits(text, edits));
    }
  });

  it("lets a timer armed before a 1 MiB search fire before the search ends", async () => {
    const text = Array.from({ length: 100_000 }, (_, i) => `line ${i}\n`).join("");
    let edited: unknown;
    const ticks = await ticksDuring(async () => {
      edited = await applyEditsInTurns(text, [{ oldText: text, newText: "x" }]);
    });
    expect(edited).toEqual({ ok: true, value: "x" });
    expect(ticks).toBeGreaterThanOrEqual(10);
  });
});
