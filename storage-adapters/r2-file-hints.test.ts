import { describe, expect, it } from "vitest";
import { FILE_HINTS_MAX, FileHints } from "./r2-file-hints.ts";

describe("FileHints", () => {
  it("keeps the most recent keys, at most its bound", () => {
    const hints = new FileHints();
    for (let i = 0; i <= FILE_HINTS_MAX; i++) hints.saw(`k${i}`);
    expect(hints.has("k0")).toBe(false);
    expect(hints.has("k1")).toBe(true);
    expect(hints.has(`k${FILE_HINTS_MAX}`)).toBe(true);
  });

  it("a key seen again is the newest, and a forgotten one is gone", () => {
    const hints = new FileHints(2);
    hints.saw("a");
    hints.saw("b");
    hints.saw("a");
    hints.saw("c");
    expect([hints.has("a"), hints.has("b"), hints.has("c")]).toEqual([true, false, true]);
    hints.forget("a");
    expect(hints.has("a")).toBe(false);
  });
});
