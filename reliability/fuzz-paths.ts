import fc from "fast-check";

/**
 * Hostile paths, as the string the vault should see and as the bytes a
 * client actually puts in a query. Every `..` position, absolute and drive
 * forms, backslashes, percent-encoding once and twice (and overlong UTF-8),
 * NUL and line separators, full-width and look-alike dots and slashes, and
 * paths of 10,000 segments.
 */
const LOOKALIKE_DOTS = ["\uff0e", "\u2024", "\u2025", "\u2026", "\ufe52", "\u00b7", "\u0701", "\u3002"];
const LOOKALIKE_SLASHES = ["\uff0f", "\u2215", "\u2044", "\u29f8", "\u2571", "\uff3c", "\ufe68", "\u29f5", "\u2216"];
const CONTROLS = [
  "\u0000",
  "\n",
  "\r",
  "\t",
  "\u0085",
  "\u2028",
  "\u2029",
  "\u007f",
  "\u001b",
  "\u200b",
  "\u202e",
  "\ufeff",
];

export interface FuzzPath {
  /** The decoded string, for JSON bodies. */
  text: string;
  /** What goes after `path=` in a query (percent-encoded, possibly twice, possibly invalid). */
  query: string;
}

export function fuzzPath(planted: readonly string[]): fc.Arbitrary<FuzzPath> {
  return fc.tuple(pathText(planted), encoding).map(([text, encode]) => ({ text, query: encode(text) }));
}

export function pathText(planted: readonly string[]): fc.Arbitrary<string> {
  const lookalike = fc.oneof(
    fc.constantFrom(...LOOKALIKE_DOTS).map((d) => d + d),
    fc.constantFrom(...LOOKALIKE_DOTS).map((d) => `.${d}`),
    fc.constantFrom(...LOOKALIKE_DOTS),
    fc.constantFrom(...LOOKALIKE_SLASHES).map((s) => `..${s}..${s}x`),
  );
  const segment = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom("a", "b", "x.txt", "dir", "new", ...planted) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        "..",
        ".",
        "",
        "...",
        ". .",
        ".. ",
        " ..",
        "%2e%2e",
        "%2E.",
        "%252e%252e",
        "~",
        "C:",
        "c:",
        "\\..",
        "..\\..",
      ),
    },
    { weight: 3, arbitrary: lookalike },
    { weight: 2, arbitrary: fc.constantFrom(...CONTROLS).map((c) => `a${c}b`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        ".capvault-tmp-x",
        ".capvault-meta",
        "x".repeat(256),
        "é".repeat(128),
        "😀".repeat(64),
        "\ud800",
        "a\udc00",
      ),
    },
    { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 8 }) },
  );
  // `..` at every position of a path of n segments.
  const withDots = fc.tuple(fc.array(segment, { minLength: 0, maxLength: 6 }), fc.nat(6)).map(([segs, at]) => {
    const copy = [...segs];
    copy.splice(at % (copy.length + 1), 0, "..");
    return copy;
  });
  const separator = fc.oneof(
    { weight: 8, arbitrary: fc.constant("/") },
    { weight: 2, arbitrary: fc.constantFrom("\\", "//", "/./", ...LOOKALIKE_SLASHES) },
  );
  const lead = fc.oneof(
    { weight: 10, arbitrary: fc.constant("") },
    {
      weight: 4,
      arbitrary: fc.constantFrom(
        "/",
        "\\",
        "//",
        "\\\\server\\share\\",
        "C:",
        "C:\\",
        "c:/",
        "~/",
        "~root/",
        "/etc/",
        "file:///",
        "\\\\?\\C:\\",
        "/proc/self/fd/",
      ),
    },
  );
  const joined = fc
    .tuple(lead, fc.oneof(withDots, fc.array(segment, { minLength: 1, maxLength: 6 })), separator, fc.boolean())
    .map(([l, segs, sep, trailing]) => l + segs.join(sep) + (trailing ? "/" : ""));
  const huge = fc
    .tuple(
      fc.constantFrom("a/", "../", "./", "/", "\\..", "a\\", "%2e%2e/", "\uff0e\uff0e/"),
      fc.constantFrom(10_000, 5_000, 1_025),
    )
    .map(([unit, n]) => unit.repeat(n));
  return fc.oneof(
    { weight: 14, arbitrary: joined },
    { weight: 2, arbitrary: huge },
    { weight: 1, arbitrary: fc.constantFrom("", "/", ".", "..", "/memories", "x") },
  );
}

const utf8 = (s: string) => new TextEncoder().encode(s);
const percentAll = (s: string) => [...utf8(s)].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join("");

/** How the client writes the path into the query. */
const encoding: fc.Arbitrary<(s: string) => string> = fc.constantFrom(
  // Exactly once: the vault must see `s` itself (lone surrogates go out as their replacement bytes).
  (s: string) => percentAll(s),
  (s: string) => safeEncode(s),
  (s: string) => safeEncode(s).replace(/%2F/g, "/"),
  // Twice: the vault must decode once and see literal `%2e`-style text.
  (s: string) => percentAll(s).replace(/%/g, "%25"),
  // Raw, only what breaks the URL syntax escaped: `+`, `%` and backslashes reach the parser as typed.
  (s: string) => s.replace(/#/g, "%23").replace(/&/g, "%26"),
  // Overlong and broken UTF-8 for the dot and slash.
  (s: string) => safeEncode(s).replace(/\./g, "%C0%AE").replace(/%2F/g, "%C0%AF"),
  (s: string) => safeEncode(s).replace(/\./g, "%E0%80%AE"),
  (s: string) => `${safeEncode(s)}%`,
  (s: string) => `${safeEncode(s)}%zz%ED%A0%80`,
);

function safeEncode(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return percentAll(s);
  }
}
