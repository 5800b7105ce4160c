/**
 * The memory commands on hostile input, over files held in memory: each
 * answer is right or a clear refusal, and the work stays linear (inputs here
 * took the old code minutes: a backtracking regex, overlapping searches, a
 * listing of everything hidden).
 */
import { describe, expect, it } from "vitest";
import { refusal } from "../shared/refusals.ts";
import { failed, ok } from "../shared/result.ts";
import { MAX_LINES_LISTED } from "./memory-edit.ts";
import { createMemoryHandler } from "./memory-handler.ts";
import { walkTree } from "./memory-tree.ts";
import { VIEW_MAX_LINES } from "./memory-view.ts";
import type { DirEntry, MemoryFiles } from "./text-files.ts";

const MiB = 1024 * 1024;

/** Files in a map; enough of TextFiles for view, str_replace and insert. */
function memoryFiles(initial: Record<string, string>) {
  const texts = new Map(Object.entries(initial));
  const files: MemoryFiles = {
    readText: async (path) =>
      texts.has(path) ? ok({ text: texts.get(path)!, etag: "e" }) : failed(refusal("notFound")),
    writeText: async (path, text) => {
      texts.set(path, text);
      return ok({ created: false, size: text.length, etag: "e", sha256: "s" });
    },
    stat: async (path) =>
      texts.has(path)
        ? ok({ type: "file", size: 0, etag: "e", modified: "", contentType: "text/plain" })
        : failed(refusal("notFound")),
    list: async () => failed(refusal("notFound")),
    delete: async () => failed(refusal("notFound")),
    move: async () => failed(refusal("notFound")),
    makeFolder: async () => failed(refusal("notFound")),
    removeFolder: async () => failed(refusal("notFound")),
  };
  return { memory: createMemoryHandler(files), text: (path: string) => texts.get(path) };
}

const numbered = (n: number, line: string) => `${String(n).padStart(6, " ")}\t${line}`;

describe("memory commands on hostile input", () => {
  it("insert takes one trailing newline off insert_text, as the reference does: a megabyte of newlines around a character", {
    timeout: 20_000,
  }, async () => {
    const { memory, text } = memoryFiles({ "a.md": "top\n", "b.md": "top\n" });
    const newlines = "\n".repeat(MiB);
    expect(
      await memory({ command: "insert", path: "/memories/a.md", insert_line: 0, insert_text: `${newlines}x` }),
    ).toMatchObject({ isError: false });
    expect(text("a.md")).toBe(`${newlines}x\ntop\n`);
    expect(
      await memory({ command: "insert", path: "/memories/b.md", insert_line: 1, insert_text: `x${newlines}` }),
    ).toMatchObject({ isError: false });
    // The reference's `replace(/\n$/, "")` takes off one; the others stay, before the file's empty last line.
    expect(text("b.md")).toBe(`top\nx${newlines}`);
  });

  it("str_replace names each line of an overlapping needle once: 60 KB of a's in 120 KB of a's", {
    timeout: 20_000,
  }, async () => {
    const { memory, text } = memoryFiles({ "a.md": "a".repeat(120_000) });
    const result = await memory({
      command: "str_replace",
      path: "/memories/a.md",
      old_str: "a".repeat(60_000),
      new_str: "b",
    });
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/in lines: 1\. Please ensure it is unique$/);
    expect(text("a.md")).toBe("a".repeat(120_000));
  });

  it(`str_replace on many lines: lists at most ${MAX_LINES_LISTED} lines of a needle found on each, and snippets a far match`, async () => {
    const { memory } = memoryFiles({ "a.md": "x\n".repeat(1000) });
    const result = await memory({ command: "str_replace", path: "/memories/a.md", old_str: "x", new_str: "y" });
    const listed = Array.from({ length: MAX_LINES_LISTED }, (_, i) => i + 1).join(", ");
    expect(result.text).toBe(
      `Error: No replacement was performed. Multiple occurrences of old_str \`x\` in lines: ${listed}, …. Please ensure it is unique`,
    );
    // A unique match after 2 Mi lines: the snippet around it, found without splitting the file.
    const far = memoryFiles({ "b.md": `${"\n".repeat(2 * MiB)}x\nlast` });
    const edited = await far.memory({ command: "str_replace", path: "/memories/b.md", old_str: "x", new_str: "y" });
    const line = 2 * MiB + 1;
    expect(edited.text).toBe(
      `The memory file has been edited. Here is the snippet showing the change (with line numbers):\n${[
        numbered(line - 2, ""),
        numbered(line - 1, ""),
        numbered(line, "y"),
        numbered(line + 1, "last"),
      ].join("\n")}`,
    );
    expect(far.text("b.md")).toBe(`${"\n".repeat(2 * MiB)}y\nlast`);
  });

  it(`view numbers at most ${VIEW_MAX_LINES} lines at once and points to view_range`, async () => {
    const { memory } = memoryFiles({ "a.md": "l\n".repeat(VIEW_MAX_LINES + 10) });
    expect(await memory({ command: "view", path: "/memories/a.md" })).toEqual({
      isError: true,
      code: "too_large",
      text: `Error: File /memories/a.md has ${VIEW_MAX_LINES + 11} lines; view at most ${VIEW_MAX_LINES} at a time with view_range [start, end].`,
    });
    const tail = await memory({ command: "view", path: "/memories/a.md", view_range: [VIEW_MAX_LINES + 9, -1] });
    expect(tail.text.split("\n").slice(1)).toEqual([
      numbered(VIEW_MAX_LINES + 9, "l"),
      numbered(VIEW_MAX_LINES + 10, "l"),
      numbered(VIEW_MAX_LINES + 11, ""),
    ]);
  });
});

describe("walkTree on hostile trees", () => {
  it("lists at most 2 × maxEntries + 1 in all, however many hidden entries it skips", async () => {
    let listed = 0;
    const files = {
      // The root holds 1,000 folders; each holds as many hidden files as it is asked for.
      list: async (path: string, maxEntries: number) => {
        const entries: DirEntry[] =
          path === ""
            ? Array.from({ length: Math.min(1000, maxEntries) }, (_, i) => ({
                name: `d${String(i).padStart(4, "0")}`,
                type: "dir" as const,
              }))
            : Array.from({ length: maxEntries }, (_, i) => ({ name: `.h${i}`, type: "file" as const, size: 1 }));
        listed += entries.length + 1;
        return ok({ entries, complete: path === "" && maxEntries >= 1000 });
      },
    } as unknown as MemoryFiles;
    const tree = await walkTree(files, "", { maxEntries: 1000, skipHidden: true });
    expect(tree).toMatchObject({ ok: true, value: { complete: false } });
    expect(listed).toBeLessThanOrEqual(2 * 1000 + 1);
  });
});
