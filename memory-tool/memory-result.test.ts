import { describe, expect, it } from "vitest";
import { formatSize, numberedLine } from "./memory-result.ts";

describe("the reference's formats", () => {
  // Expected values printed by the reference's `formatFileSize` (@anthropic-ai/sdk 1.10), ties rounded up.
  it.each([
    [0, "0B"],
    [1, "1B"],
    [1023, "1023B"],
    [1024, "1K"],
    [1280, "1.3K"],
    [2359296, "2.3M"],
    [1331, "1.3K"],
    [1536, "1.5K"],
    [2047, "2.0K"],
    [3840, "3.8K"],
    [1048576, "1M"],
    [3145727, "3.0M"],
    [1101005, "1.1M"],
    [5 * 1024 ** 3, "5G"],
    [1024 ** 4, "1024G"],
  ])("formatSize(%d) = %s", (bytes, text) => {
    expect(formatSize(bytes)).toBe(text);
  });

  it("numbers lines right-aligned to six, then a tab", () => {
    expect(numberedLine(7, "x")).toBe("     7\tx");
    expect(numberedLine(123456, "")).toBe("123456\t");
  });
});
