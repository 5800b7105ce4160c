import { describe, expect, it } from "vitest";
import { progressText, relative, usageText } from "./format.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const inSeconds = (s: number) => relative(new Date(NOW + s * 1000).toISOString(), NOW);

describe("relative", () => {
  it("names a unit once the smaller one would round up to it", () => {
    // A one-hour cap seen a moment after minting (the console test's case, which said "60 minutes").
    expect(inSeconds(3599.6)).toBe("in 1 hour");
    expect(inSeconds(3570)).toBe("in 1 hour");
    expect(inSeconds(3569)).toBe("in 59 minutes");
    expect(inSeconds(86400 - 1800)).toBe("tomorrow");
    expect(inSeconds(86400 - 1801)).toBe("in 23 hours");
    expect(inSeconds(60)).toBe("in 1 minute");
    expect(inSeconds(59)).toBe("in 59 seconds");
  });

  it("reads the past too, and the present", () => {
    expect(inSeconds(-3 * 86400)).toBe("3 days ago");
    expect(inSeconds(-120)).toBe("2 minutes ago");
    expect(inSeconds(0)).toBe("now");
  });

  it("reads a time that is no date as nothing, rather than throwing", () => {
    expect(relative("not a date", NOW)).toBe("");
  });
});

describe("progressText", () => {
  it("gives the percent, and the time left once a second has passed", () => {
    expect(progressText(0, 100, 0)).toBe("0%");
    expect(progressText(42, 100, 500)).toBe("42%");
    expect(progressText(50, 100, 2000)).toBe("50% · 2 s left");
    expect(progressText(10, 100, 10_000)).toBe("10% · 2 min left");
    expect(progressText(100, 100, 3000)).toBe("100%");
  });
});

describe("usageText", () => {
  it("shows usage against the quota, or says there is none", () => {
    expect(usageText({ bytes: 2048, files: 3 }, { maxBytes: null, maxFiles: null })).toBe(
      "2.0 KiB, 3 files (no quota)",
    );
    expect(usageText({ bytes: 0, files: 1 }, { maxBytes: 1024 * 1024, maxFiles: 10 })).toBe(
      "0 B of 1.0 MiB, 1 file of 10",
    );
  });
});
