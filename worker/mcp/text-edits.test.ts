import { describe, expect, it } from "vitest";
import { applyEdits, MAX_EDIT_SEARCH_CHARS, MAX_EDITS } from "./text-edits.ts";

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
