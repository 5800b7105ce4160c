/**
 * The bisimulation's paths (fast-check): few names so commands collide, odd,
 * long and hostile ones, pre-encoded queries and JSON-only strings.
 * bisim-commands.ts builds its commands from them.
 */
import fc from "fast-check";
import type { PathArg } from "./bisim-commands.ts";

// Few names, so that commands collide on the same files and folders. `a`, `a b`, `a.b` and `a_b` sort
// differently as R2 keys (`a/…` after `a.b`) than as names (`a` first): the delimiter and resume logic must agree.
const commonSegment = fc.oneof(
  { weight: 6, arbitrary: fc.constant("a") },
  { weight: 4, arbitrary: fc.constant("b") },
  { weight: 2, arbitrary: fc.constantFrom("a_b", "a b", "a.b") },
);
const commonPath = fc.oneof(
  { weight: 5, arbitrary: commonSegment },
  { weight: 4, arbitrary: fc.tuple(commonSegment, commonSegment).map((s) => s.join("/")) },
  { weight: 1, arbitrary: fc.tuple(commonSegment, commonSegment, commonSegment).map((s) => s.join("/")) },
);
// Unicode (astral, combining, fullwidth: UTF-8 order differs from UTF-16 order), names that are paths only below a
// root (`~x`, `c:`), percent signs that must not be decoded twice, dots that are not `.` or `..`.
const oddSegment = fc.constantFrom(
  "a b",
  "a-b",
  "a.b",
  "a+b",
  "A",
  "é",
  "e\u0301",
  "😀",
  "\uff21",
  "%2e%2e",
  "...",
  "..a",
  "a..",
  "~x",
  "x:y",
  "c:",
  "日本",
  "a%2Fb",
  "-",
);
const longSegment = fc.constantFrom(
  "L".repeat(255),
  "M".repeat(254),
  "é".repeat(127),
  "😀".repeat(63),
  "x".repeat(200),
);
const segment = fc.oneof(
  { weight: 8, arbitrary: commonSegment },
  { weight: 6, arbitrary: oddSegment },
  { weight: 1, arbitrary: longSegment },
);
const oddPath = fc
  .tuple(fc.array(segment, { minLength: 1, maxLength: 3 }), fc.nat(5))
  .map(([segments, slash]) => segments.join("/") + (slash === 0 ? "/" : ""));
// Near R2's 1,024-byte key limit: some pass the parser yet overflow with the root prefix, some do not parse.
const deepLongPath = fc.array(longSegment, { minLength: 3, maxLength: 5 }).map((segments) => segments.join("/"));
const hostilePath = fc.constantFrom(
  "..",
  "../a",
  "a/..",
  "a/../b",
  "../../../etc/passwd",
  "/etc/passwd",
  "/",
  "\\x",
  "\\\\server\\share",
  "~",
  "~/x",
  "C:",
  "C:\\x",
  "c:/x",
  "a//b",
  "//",
  "a//",
  ".",
  "./a",
  "a/./b",
  "a/.",
  "a\\b",
  "a\u0000b",
  "a\nb",
  "\t",
  "\u007f",
  "a\u0085",
  "\u2028",
  "a/\u2029",
  ".capvault-tmp-x",
  "a/.capvault-meta",
  "x".repeat(256),
  "😀".repeat(64),
  "%2e%2e",
  "%2e%2e/%2e%2e",
  "a/",
  "a/b/",
);
/** Paths a client sent already percent-encoded: the server decodes exactly once. */
const rawQueryPath = fc.constantFrom<PathArg>(
  { text: "..", raw: "%2e%2e" },
  { text: "../x", raw: "%2e%2e%2fx" },
  { text: "a/b", raw: "a%2fb" },
  { text: "%2e", raw: "%252e" },
  { text: "a b", raw: "a%20b" },
  { text: "a b", raw: "a+b" },
  { text: null, raw: "%ED%A0%80", fault: "undecodable_path" },
  { text: null, raw: "a%ZZ", fault: "undecodable_path" },
  { text: null, raw: "a&path=b", fault: "repeated_path" },
);
const reusedPath = fc.nat(30).map((reuse) => ({ reuse }));
export const queryPath: fc.Arbitrary<PathArg> = fc.oneof(
  { weight: 18, arbitrary: reusedPath },
  { weight: 16, arbitrary: commonPath.map((text) => ({ text })) },
  { weight: 6, arbitrary: oddPath.map((text) => ({ text })) },
  { weight: 1, arbitrary: deepLongPath.map((text) => ({ text })) },
  { weight: 3, arbitrary: hostilePath.map((text) => ({ text })) },
  { weight: 1, arbitrary: rawQueryPath },
  { weight: 1, arbitrary: fc.constantFrom<PathArg>({ text: "" }, { text: null }) },
);
/** JSON carries what a query cannot: unpaired surrogates. */
export const jsonPath: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 18, arbitrary: reusedPath },
  { weight: 16, arbitrary: commonPath },
  { weight: 6, arbitrary: oddPath },
  { weight: 1, arbitrary: deepLongPath },
  { weight: 3, arbitrary: hostilePath },
  { weight: 1, arbitrary: fc.constantFrom("\ud800", "a/\udc00b", "") },
);
