import { describe, expect, it } from "vitest";
import { compilePathGlob, MAX_GLOB_ALTERNATIVES, pathGlobMatches, pathGlobMayMatchBelow } from "./path-glob.ts";

const matches = (pattern: string, path: string) => pathGlobMatches(compilePathGlob(pattern)!, path);

describe("path globs", () => {
  it("matches `*` and `?` within one segment only", () => {
    expect(matches("*.md", "a.md")).toBe(true);
    expect(matches("*.md", ".hidden.md")).toBe(true);
    expect(matches("*.md", "notes/a.md")).toBe(false);
    expect(matches("a?c", "abc")).toBe(true);
    expect(matches("a?c", "ac")).toBe(false);
    expect(matches("a*b*c", "axxbyyc")).toBe(true);
    expect(matches("a*b*c", "axxbyy")).toBe(false);
  });

  it("matches `**` as zero or more whole segments", () => {
    expect(matches("**/*.ts", "a.ts")).toBe(true);
    expect(matches("**/*.ts", "x/y/z/a.ts")).toBe(true);
    expect(matches("src/**/a.ts", "src/a.ts")).toBe(true);
    expect(matches("src/**/a.ts", "src/p/q/a.ts")).toBe(true);
    expect(matches("src/**/a.ts", "lib/p/a.ts")).toBe(false);
    expect(matches("src/**", "src/p/q")).toBe(true);
    expect(matches("**", "anything/at/all")).toBe(true);
  });

  it("reads classes, alternatives and escapes; a leading `/` is the root", () => {
    expect(matches("[ab].txt", "b.txt")).toBe(true);
    expect(matches("[!ab].txt", "b.txt")).toBe(false);
    expect(matches("[a-c]x", "cx")).toBe(true);
    expect(matches("*.{md,txt}", "a.txt")).toBe(true);
    expect(matches("*.{md,txt}", "a.ts")).toBe(false);
    expect(matches("\\*.md", "*.md")).toBe(true);
    expect(matches("\\*.md", "a.md")).toBe(false);
    expect(matches("[unclosed", "[unclosed")).toBe(true);
    expect(matches("/notes/*.md", "notes/a.md")).toBe(true);
  });

  it("bounds brace expansion", () => {
    expect(compilePathGlob("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}")).not.toBeNull();
    expect(MAX_GLOB_ALTERNATIVES).toBe(64);
    expect(compilePathGlob("{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}")).toBeNull();
  });

  it("stays polynomial on a pattern that backtracks a RegExp exponentially", () => {
    const pattern = `${"*a".repeat(30)}b`;
    expect(matches(pattern, "a".repeat(60))).toBe(false);
    expect(matches(`${"**/".repeat(30)}z`, `${"a/".repeat(60)}y`)).toBe(false);
  });

  it("tells a walk which folders may hold a match", () => {
    const glob = compilePathGlob("src/*/lib/*.ts")!;
    expect(pathGlobMayMatchBelow(glob, "")).toBe(true);
    expect(pathGlobMayMatchBelow(glob, "src")).toBe(true);
    expect(pathGlobMayMatchBelow(glob, "src/x/lib")).toBe(true);
    expect(pathGlobMayMatchBelow(glob, "docs")).toBe(false);
    expect(pathGlobMayMatchBelow(glob, "src/x/bin")).toBe(false);
    expect(pathGlobMayMatchBelow(compilePathGlob("**/*.ts")!, "deep/er")).toBe(true);
  });
});
