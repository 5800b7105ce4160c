import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { childRoot, parseRelPath } from "./rel-path.ts";

const code = (input: string) => {
  const r = parseRelPath(input);
  return r.ok ? "ok" : r.error.code;
};

describe("parseRelPath: hostile inputs", () => {
  it.each([
    ["../../../etc/passwd", "path_escapes"],
    ["..", "path_escapes"],
    ["a/../b", "path_escapes"],
    ["a/..", "path_escapes"],
    ["../", "path_escapes"],
    ["a/b/../../..", "path_escapes"],
    ["/etc/passwd", "absolute_path"],
    ["/", "absolute_path"],
    ["\\windows\\system32", "absolute_path"],
    ["~/.ssh/id_rsa", "absolute_path"],
    ["~root", "absolute_path"],
    ["C:\\Windows", "absolute_path"],
    ["c:/x", "absolute_path"],
    ["a\\..\\b", "invalid_path"],
    ["a\\b", "invalid_path"],
    ["a//b", "invalid_path"],
    ["a/./b", "invalid_path"],
    [".", "invalid_path"],
    ["./a", "invalid_path"],
    ["a//", "invalid_path"],
    ["a\u0000b", "invalid_path"],
    ["a\nb", "invalid_path"],
    ["a\u001fb", "invalid_path"],
    ["a\u007fb", "invalid_path"],
    ["a\u0085b", "invalid_path"],
    ["a\u2028b", "invalid_path"],
    ["a\u2029b", "invalid_path"],
    ["a\ud800b", "invalid_path"],
    ["a\udc00", "invalid_path"],
    ["x".repeat(256), "invalid_path"],
    ["é".repeat(128), "invalid_path"],
    [Array.from({ length: 5 }, () => "y".repeat(250)).join("/"), "invalid_path"],
    [".capvault-tmp-123", "invalid_path"],
    ["a/.capvault-meta", "invalid_path"],
    ["%2e%2e/x", "ok"],
    ["...", "ok"],
    ["..a", "ok"],
    ["a..", "ok"],
    ["a/b/", "ok"],
    ["x".repeat(255), "ok"],
    ["日本語/ファイル.md", "ok"],
    ["😀/é", "ok"],
    ["a:b", "absolute_path"],
    ["ab:c", "ok"],
    ["1:", "ok"],
  ])("%j → %s", (input, expected) => {
    expect(code(input)).toBe(expected);
  });

  it("treats empty and absent as the root", () => {
    for (const input of ["", undefined, null]) {
      const r = parseRelPath(input);
      expect(r.ok && r.value.segments.length).toBe(0);
    }
  });

  it("ignores exactly one trailing slash and stores names as given", () => {
    const r = parseRelPath("Straße/Ａ/é/");
    expect(r.ok && r.value.text).toBe("Straße/Ａ/é");
    // é as one code point and as e + combining accent stay distinct names.
    const composed = parseRelPath("\u00e9");
    const decomposed = parseRelPath("e\u0301");
    expect(composed.ok && decomposed.ok && composed.value.text !== decomposed.value.text).toBe(true);
  });
});

// Strings biased towards the characters that make paths dangerous.
const pathish = fc
  .array(
    fc.oneof(
      fc.constantFrom("/", "\\", ".", "..", "~", ":", "C:", "a", "b", "\u0000", "\n", "\ud800", "é", "%2e"),
      fc.string(),
    ),
    {
      maxLength: 12,
    },
  )
  .map((parts) => parts.join(""));
const roots = fc
  .array(fc.stringMatching(/^[a-z_]{1,8}$/), { maxLength: 3 })
  .map((parts) => parts.map((p) => `${p}/`).join(""));

describe("parseRelPath: properties", () => {
  it("an accepted path joined to any root stays under that root", () => {
    fc.assert(
      fc.property(roots, pathish, (root, input) => {
        const r = parseRelPath(input);
        if (!r.ok || r.value.segments.length === 0) return;
        // A file's key is the root and the path's text joined, as R2 and the path check make it.
        const key = `${root}${r.value.text}`;
        const resolved = path.posix.resolve("/vault", key);
        expect(resolved.startsWith(path.posix.join("/vault", root))).toBe(true);
        expect(resolved).toBe(path.posix.join("/vault", key));
        const sub = childRoot(root, r.value);
        expect(sub.startsWith(root) && (sub === "" || sub.endsWith("/"))).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it("is idempotent: the canonical text parses to itself", () => {
    fc.assert(
      fc.property(pathish, (input) => {
        const r = parseRelPath(input);
        if (!r.ok) return;
        const again = parseRelPath(r.value.text);
        expect(again.ok && again.value.text).toBe(r.value.text);
        expect(again.ok && again.value.segments).toEqual(r.value.segments);
      }),
      { numRuns: 2000 },
    );
  });

  it("never accepts a segment that a filesystem would interpret", () => {
    fc.assert(
      fc.property(pathish, (input) => {
        const r = parseRelPath(input);
        if (!r.ok) return;
        for (const s of r.value.segments) {
          expect(["", ".", ".."]).not.toContain(s);
          expect(s.includes("/") || s.includes("\\") || s.includes("\u0000")).toBe(false);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
