import { describe, expect, it } from "vitest";
import { fenced } from "./file-tools.ts";
import { MAX_DIFF_LINES, unifiedDiff } from "./unified-diff.ts";

const HEAD =
  "Index: f.md\n===================================================================\n--- f.md\toriginal\n+++ f.md\tmodified\n";
const lines = (n: number, changed: number[] = []) =>
  Array.from({ length: n }, (_, i) => (changed.includes(i) ? `LINE ${i}` : `line ${i}`)).join("\n") + "\n";

/** Applies a diff of newline-terminated texts (all these tests make), checking every context and removed line. */
function apply(before: string, diff: string): string {
  const old = before === "" ? [] : before.slice(0, -1).split("\n");
  const out: string[] = [];
  let at = 0;
  for (const line of diff.split("\n").slice(4, -1)) {
    const hunk = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(line);
    if (hunk) {
      const start = Number(hunk[2]) === 0 ? Number(hunk[1]) : Number(hunk[1]) - 1;
      expect(start).toBeGreaterThanOrEqual(at);
      out.push(...old.slice(at, start));
      at = start;
    } else if (line.startsWith(" ")) {
      expect(line.slice(1)).toBe(old[at]);
      out.push(old[at++]!);
    } else if (line.startsWith("-")) {
      expect(line.slice(1)).toBe(old[at++]);
    } else if (line.startsWith("+")) {
      out.push(line.slice(1));
    } else {
      throw new Error(`unexpected diff line ${JSON.stringify(line)}`);
    }
  }
  out.push(...old.slice(at));
  return out.length === 0 ? "" : `${out.join("\n")}\n`;
}

describe("unifiedDiff: jsdiff createTwoFilesPatch format (outputs checked against jsdiff 8)", () => {
  it.each([
    ["one changed line", "a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"],
    ["lines added to an empty file", "", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y\n"],
    ["a final newline added", "a\nb", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"],
    [
      "two changes far apart: two hunks with four lines of context",
      lines(30),
      lines(30, [3, 20]),
      "@@ -1,8 +1,8 @@\n line 0\n line 1\n line 2\n-line 3\n+LINE 3\n line 4\n line 5\n line 6\n line 7\n" +
        "@@ -17,9 +17,9 @@\n line 16\n line 17\n line 18\n line 19\n-line 20\n+LINE 20\n line 21\n line 22\n line 23\n line 24\n",
    ],
    ["no change", "same\n", "same\n", ""],
    [
      "a line replaced by a copy of the line after it: the first copy is kept, as jsdiff keeps it",
      "{a,b} 0\n{a,b} edited\ndelta 2\n",
      "{a,b} edited\n{a,b} edited\ndelta 2\n",
      "@@ -1,3 +1,3 @@\n-{a,b} 0\n {a,b} edited\n+{a,b} edited\n delta 2\n",
    ],
  ])("%s", (_name, before, after, hunks) => {
    expect(unifiedDiff("f.md", before, after)).toBe(HEAD + hunks);
  });

  it("a one-line edit atop 25,000 short lines is one small hunk, not the whole file", () => {
    const before = `x\n${"a\n".repeat(25_000)}`;
    const after = `y\n${"a\n".repeat(25_000)}`;
    expect(unifiedDiff("f.md", before, after)).toBe(`${HEAD}@@ -1,5 +1,5 @@\n-x\n+y\n a\n a\n a\n a\n`);
  });

  it("stays correct and fast when the files share nothing (bounded edit distance)", () => {
    const before = Array.from({ length: 3000 }, (_, i) => `old ${i}`).join("\n") + "\n";
    const after = Array.from({ length: 3000 }, (_, i) => `new ${i}`).join("\n") + "\n";
    const started = Date.now();
    const diff = unifiedDiff("f.md", before, after);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(diff.startsWith(`${HEAD}@@ -1,3000 +1,3000 @@\n`)).toBe(true);
    expect(apply(before, diff)).toBe(after);
  });

  it("produces patches that turn the old text into the new one", () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const text = () =>
      Array.from({ length: Math.floor(random() * 40) }, () => "abcde"[Math.floor(random() * 5)]).join("\n") + "\n";
    for (let i = 0; i < 300; i++) {
      const [before, after] = [text(), text()];
      expect(apply(before, unifiedDiff("f.md", before, after))).toBe(after);
    }
  });
});

/** Every line of a newline-terminated text as a removed or added diff line. */
const block = (op: string, text: string) =>
  text
    .slice(0, -1)
    .split("\n")
    .map((l) => `${op}${l}\n`)
    .join("");

describe("unifiedDiff: bounded work on hostile input", () => {
  it("shows a differing middle of more than MAX_DIFF_LINES lines as one replaced block; unchanged lines around it do not count", () => {
    const n = MAX_DIFF_LINES;
    const before = lines(n);
    const after = lines(n, [0, n - 1]);
    expect(unifiedDiff("f.md", before, after)).toBe(
      `${HEAD}@@ -1,${n} +1,${n} @@\n${block("-", before)}${block("+", after)}`,
    );
    // One change after 2 Mi lines: one small hunk, numbered right.
    const newlines = "\n".repeat(2 * 1024 * 1024);
    const at = 2 * 1024 * 1024 + 1;
    expect(unifiedDiff("f.md", `${newlines}x\n`, `${newlines}y\n`)).toBe(
      `${HEAD}@@ -${at - 4},5 +${at - 4},5 @@\n \n \n \n \n-x\n+y\n`,
    );
  });

  it("rewrites 100,000 lines as one block (the old diff overflowed the stack spreading the hunk)", () => {
    const n = 100_000;
    const before = lines(n);
    const after = before.replaceAll("line", "LINE");
    expect(unifiedDiff("f.md", before, after)).toBe(
      `${HEAD}@@ -1,${n} +1,${n} @@\n${block("-", before)}${block("+", after)}`,
    );
  });

  it("fences a diff holding a 1 MiB backtick run in one pass", { timeout: 20_000 }, () => {
    const run = "`".repeat(1024 * 1024);
    const fence = `${run}\``;
    expect(fenced(`-${run}\n+x\n`)).toBe(`${fence}diff\n-${run}\n+x\n${fence}\n\n`);
    expect(fenced("no ticks\n")).toBe("```diff\nno ticks\n```\n\n");
    expect(fenced("a `` b ``` c\n")).toBe("````diff\na `` b ``` c\n````\n\n");
  });
});
