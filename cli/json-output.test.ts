import { describe, expect, it } from "vitest";
import { jsonText } from "./json-output.ts";

describe("jsonText", () => {
  const hostile = {
    name: "evil\u202egnp.exe\u2066x\u2069",
    marks: "a\u200eb\u200fc\u061cd",
    csi: "\u009b31mred\u009b0m",
    del: "a\u007fb",
    lines: "one\u2028two\u2029three",
    esc: "\u001b[2J",
    plain: "é 😀 Ａ",
  };

  it("escapes what a terminal would act on, and parses to the same value", () => {
    const text = jsonText(hostile, 2);
    expect(text).not.toMatch(/[\u001b\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.parse(text)).toEqual(hostile);
    expect(text).toContain("\\u009b31mred");
    expect(text).toContain("evil\\u202egnp.exe\\u2066x\\u2069");
  });

  it("leaves other text as JSON.stringify writes it", () => {
    expect(jsonText({ plain: hostile.plain })).toBe(JSON.stringify({ plain: hostile.plain }));
    expect(jsonText([1, "a"], 2)).toBe(JSON.stringify([1, "a"], null, 2));
  });
});
