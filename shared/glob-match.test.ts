/**
 * The glob matcher against minimatch's answers (`dot: true`, as the official
 * filesystem server calls it), recorded from minimatch 10.2.6, and its
 * bound: hostile globs cost a bounded number of steps, then answer null.
 */
import { describe, expect, it } from "vitest";
import { compileGlob } from "./glob-compile.ts";
import { GlobMeter, globMatches, MAX_GLOB_STEPS } from "./glob-match.ts";

const match = (path: string, pattern: string) => {
  const glob = compileGlob(pattern);
  if (!glob.ok) throw new Error(glob.error.message);
  return globMatches(glob.value, path, new GlobMeter());
};

describe("globs as minimatch reads them", () => {
  it.each<[string, string, boolean]>([
    ["a", "a/**", false],
    ["a/b", "a/**", true],
    ["a/b/c", "a/**", true],
    ["a", "**", true],
    ["a", "**/**", true],
    ["a", "a/**/**", false],
    ["a/b", "a/**/b", true],
    ["a/b", "a/**/**/b", true],
    ["x/a", "**/a/**", false],
    ["a/x", "**/a/**", true],
    [".x", "*", true],
    ["x/.y/z", "**/z", true],
    ["a.txt", "**/*.txt", true],
    ["d/a.txt", "*.txt", false],
    ["ab", "a**b", true],
    ["a/b", "a**b", false],
    ["a/b", "a?b", false],
    ["a", "*/**", false],
    ["a/b", "*/**", true],
    ["a", "{a,b}", true],
    ["cb", "{a,{b,c}}b", true],
    ["d/x.js", "**/*.{ts,js}", true],
    ["a", "[!b]", true],
    ["a", "[^b]", true],
    ["ab", "[a-c]b", true],
    ["-", "[a-]", true],
    ["]", "[]]", true],
    ["a]", "[]a]]", true],
    ["[a", "[a", true],
    ["a", "[a", false],
    ["*", "\\*", true],
    ["\\*", "\\*", false],
    ["a", "!b", true],
    ["a", "!!a", true],
    ["#a", "#a", false],
    ["A", "a", false],
    ["é", "?", true],
  ])("%j against %j is %j", (path, pattern, expected) => {
    expect(match(path, pattern)).toBe(expected);
  });
});

describe("bounded work", () => {
  it.each([`*${"a".repeat(300)}{1,2,3,4}{1,2,3,4}{1,2,3}`, `${"**/".repeat(300)}b`, `[${"a".repeat(1000)}]*`])(
    "%#: a hostile glob stops at the step budget, whatever the paths",
    (pattern) => {
      const glob = compileGlob(pattern);
      expect(glob.ok).toBe(true);
      const meter = new GlobMeter();
      const deep = Array.from({ length: 500 }, () => "a").join("/");
      let answered = 0;
      for (let i = 0; i < 10_000; i++) {
        const path = i % 2 === 0 ? `${"a".repeat(250)}${i}` : deep;
        if (globMatches(glob.ok ? glob.value : (null as never), path, meter) === null) break;
        answered++;
      }
      expect(answered).toBeLessThan(10_000);
      // Past the budget by at most one path's worth (length × glob length).
      expect(meter.steps).toBeLessThan(MAX_GLOB_STEPS + 1024 * 1024);
    },
  );

  it("refuses long globs and brace bombs before matching anything", () => {
    expect(compileGlob("x".repeat(1025)).ok).toBe(false);
    expect(compileGlob("{a,b}".repeat(7)).ok).toBe(false);
    expect(compileGlob("{a,b}".repeat(6)).ok).toBe(true);
  });
});
