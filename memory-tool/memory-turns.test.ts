/**
 * A memory edit of a large file gives the runtime turns before and after
 * its synchronous pass over the text: reading, editing and writing back a
 * 2 MiB file in one go held up a read on another cap
 * (reliability/hostile-requests.ts). Turns are counted, not timed: a zero
 * timer armed when the file is read ticks once per turn until the write.
 */
import { describe, expect, it } from "vitest";
import { refusal } from "../shared/refusals.ts";
import { failed, ok } from "../shared/result.ts";
import { createMemoryHandler } from "./memory-handler.ts";
import type { MemoryFiles } from "./text-files.ts";

function countingFiles(initial: string) {
  let text = initial;
  let turns = 0;
  let ticking = false;
  let turnsBeforeWrite = -1;
  const tick = () => {
    turns++;
    if (ticking) setTimeout(tick, 0);
  };
  const files: MemoryFiles = {
    readText: async () => {
      ticking = true;
      setTimeout(tick, 0);
      return ok({ text, etag: "v1" });
    },
    writeText: async (_path, next) => {
      turnsBeforeWrite = turns;
      ticking = false;
      text = next;
      return ok({ created: false, size: next.length, etag: "v2", sha256: "s" });
    },
    stat: async () => failed(refusal("notFound")),
    list: async () => failed(refusal("notFound")),
    delete: async () => failed(refusal("notFound")),
    move: async () => failed(refusal("notFound")),
    makeFolder: async () => failed(refusal("notFound")),
    removeFolder: async () => failed(refusal("notFound")),
  };
  return { memory: createMemoryHandler(files), text: () => text, turnsBeforeWrite: () => turnsBeforeWrite };
}

describe("memory edits take turns with other requests", () => {
  it("str_replace in 2 MiB of newlines: before the edit and before the write", async () => {
    const file = countingFiles(`${"\n".repeat(2 * 1024 * 1024 - 10)}x`);
    const answer = await file.memory({ command: "str_replace", path: "/memories/nl.md", old_str: "x", new_str: "y" });
    expect(JSON.stringify(answer)).toContain("has been edited");
    expect(file.text().endsWith("\ny")).toBe(true);
    // A turn before the edit and before the write, and inside the edit every 128 Ki characters
    // counted to find the changed line's number (2 MiB of newlines): 16 more.
    expect(file.turnsBeforeWrite()).toBeGreaterThanOrEqual(10);
  });

  it("str_replace of a long needle (KMP) in 2 MiB: the search takes turns too", async () => {
    const needle = `${"a".repeat(300)}b`;
    const file = countingFiles(`${"a".repeat(2 * 1024 * 1024)}${needle}`);
    const answer = await file.memory({ command: "str_replace", path: "/memories/a.md", old_str: needle, new_str: "c" });
    expect(JSON.stringify(answer)).toContain("has been edited");
    expect(file.text().endsWith("ac")).toBe(true);
    // The text has no newline, so every turn past the first two is the search's.
    expect(file.turnsBeforeWrite()).toBeGreaterThanOrEqual(10);
  });

  it("insert: the same turns", async () => {
    const file = countingFiles("top\n");
    await file.memory({ command: "insert", path: "/memories/a.md", insert_line: 1, insert_text: "next" });
    expect(file.text()).toBe("top\nnext\n");
    expect(file.turnsBeforeWrite()).toBeGreaterThanOrEqual(2);
  });
});
