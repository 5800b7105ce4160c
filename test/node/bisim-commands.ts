/**
 * The bisimulation's commands and their generators (fast-check): few names so
 * commands collide, hostile and odd paths, conditions, bodies, version ids.
 * test/node/bisimulation.node.test.ts runs them on the model, R2 and disk.
 * The paths they take: bisim-paths.ts.
 */
import fc from "fast-check";
import { RIGHTS } from "../../shared/rights.ts";
import type { QueryFault } from "../model/vault-model.ts";
import { jsonPath, queryPath } from "./bisim-paths.ts";

/**
 * A path argument: the string the server must receive, optionally with the
 * raw (pre-encoded) query form that decodes to it; or `reuse`, a path an
 * earlier command of the sequence used (so reads, moves and child caps meet
 * files that exist), resolved when the sequence runs.
 */
export type PathArg = ResolvedPath | { reuse: number };
/** `fault`: the raw query does not decode to one path (see QueryFault). */
export type ResolvedPath = { text: string | null; raw?: string; fault?: QueryFault };
/** In a JSON body (move, subdir) a path field holds any JSON value, or a `{ reuse }` marker. */
export type JsonBody = string | Record<string, unknown>;

export type CapArg = number | "latest" | "unknown" | "malformed";
export type WriteCondition =
  | "none"
  | "ifMatch"
  | "ifMatchBare"
  | "ifMatchWeak"
  | "ifMatchList"
  | "ifMatchStale"
  | "ifMatchStar"
  | "ifNoneMatchStar"
  | "ifNoneMatch"
  | "ifNoneMatchStale";
export type ReadCondition = "none" | "current" | "weak" | "stale" | "star" | "list";

export type Command =
  | { kind: "write"; cap: CapArg; path: PathArg; content: Uint8Array; contentType?: string; condition: WriteCondition }
  | { kind: "read"; cap: CapArg; path: PathArg; range?: string; condition: ReadCondition }
  | { kind: "stat"; cap: CapArg; path: PathArg }
  | { kind: "list"; cap: CapArg; path: PathArg; limit?: string; cursor?: string; depth?: string }
  | { kind: "delete"; cap: CapArg; path: PathArg }
  | { kind: "mkdir" | "rmdir"; cap: CapArg; path: PathArg }
  | { kind: "move"; cap: CapArg; body: JsonBody }
  | { kind: "subdir"; cap: CapArg; body: JsonBody }
  | { kind: "revoke"; target: number }
  | { kind: "revokeChild"; cap: CapArg; child: number | "bogus" }
  | { kind: "children"; cap: CapArg }
  /** The last listing that had more pages, continued from its first cursor now, after whatever happened since. */
  | { kind: "resume" }
  | { kind: "info"; cap: CapArg }
  // ---- versions ----
  | { kind: "versions"; cap: CapArg; path: PathArg; limit?: string; cursor?: VersionIdArg }
  | { kind: "readVersion" | "restore" | "redact"; cap: CapArg; id: VersionIdArg };
// ---- quotas (being built on another branch): their commands join this union, `command` and `toPlainRequest` here ----

/**
 * A version id as sent: one the cap can name (`mine`, counted back from its
 * newest), one of the root's newest (`recent`, so redacted, pruned and
 * out-of-scope ones come up often), any allocated so far, one not allocated
 * yet, or a raw string that is no id.
 */
export type VersionIdArg =
  | { mine: number }
  | { recent: number }
  | { any: number }
  | { unknown: number }
  | { raw: string };

/** The root, the cap minted last, any cap so far, or a token that names none. */
const capArg: fc.Arbitrary<CapArg> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(0) },
  { weight: 6, arbitrary: fc.constant("latest" as const) },
  { weight: 8, arbitrary: fc.nat(1000) },
  { weight: 1, arbitrary: fc.constantFrom<CapArg>("unknown", "malformed") },
);

const content = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom("", "hello", "hello!", "ünïcødé 😀").map((s) => new TextEncoder().encode(s)),
  },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 24 }) },
);
const contentType = fc.option(
  fc.constantFrom(
    "text/plain",
    "text/markdown; charset=utf-8",
    "application/json",
    "image/png",
    'x/y; a="b c"',
    "TEXT/Plain",
    "",
    "a\tb",
    `text/plain; x=${"y".repeat(300)}`,
  ),
  { nil: undefined, freq: 3 },
);
const rangeHeader = fc.option(
  fc.oneof(
    fc.constantFrom(
      "bytes=0-3",
      "bytes=2-",
      "bytes=-3",
      "bytes=-0",
      "bytes=0-0",
      "bytes=5-2",
      "bytes=100-",
      "bytes=1-2,4-5",
      "items=0-1",
      "bytes=-",
      "bytes=0-999",
    ),
    fc.tuple(fc.nat(12), fc.nat(12)).map(([a, b]) => `bytes=${a}-${a + b}`),
  ),
  { nil: undefined, freq: 2 },
);

/** Mostly valid values, sometimes one the contract refuses; `undefined` leaves the field out of the JSON. */
const mostly = <T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<unknown>, absentFreq = 4): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: absentFreq, arbitrary: fc.constant(undefined) },
    { weight: 12, arbitrary: valid as fc.Arbitrary<unknown> },
    { weight: 1, arbitrary: invalid },
  );
const subdirBody: fc.Arbitrary<JsonBody> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      path: mostly(jsonPath, fc.constantFrom(5, null, ["a"]), 0),
      rights: mostly(fc.shuffledSubarray([...RIGHTS]), fc.constantFrom(["read", "read"], ["admin"], "read", {})),
      ttlSeconds: mostly(fc.constantFrom(3600, null), fc.constantFrom(0, 1.5, "60"), 18),
      label: mostly(fc.constantFrom("lbl", "ünï 😀", null), fc.constantFrom("bad\nlabel", 7), 12),
      maxBytes: mostly(fc.constantFrom(0, 4, 12, 40, null), fc.constantFrom(-1, 1.5, "9"), 24),
      maxFiles: mostly(fc.constantFrom(0, 1, 3, null), fc.constantFrom(-1, "2"), 24),
      history: mostly(fc.constantFrom("all", null), fc.constantFrom("none", true), 12),
      bogus: fc.oneof({ weight: 30, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant(true) }),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom("{", "[]", "", "null", '"a"') },
);
const moveBody: fc.Arbitrary<JsonBody> = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      from: mostly(jsonPath, fc.constantFrom(1, null), 0),
      to: mostly(jsonPath, fc.constantFrom(1, null), 0),
      overwrite: mostly(fc.boolean(), fc.constantFrom("yes", 1, null), 12),
      extra: fc.oneof({ weight: 30, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant(1) }),
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom("{", '{"from":"a"}', "[]") },
);

export const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record({
      kind: fc.constant("write" as const),
      cap: capArg,
      path: queryPath,
      content,
      contentType,
      condition: fc.oneof(
        { weight: 10, arbitrary: fc.constant<WriteCondition>("none") },
        {
          weight: 6,
          arbitrary: fc.constantFrom<WriteCondition>(
            "ifMatch",
            "ifMatchBare",
            "ifMatchWeak",
            "ifMatchList",
            "ifMatchStale",
            "ifMatchStar",
            "ifNoneMatchStar",
            "ifNoneMatch",
            "ifNoneMatchStale",
          ),
        },
      ),
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("read" as const),
      cap: capArg,
      path: queryPath,
      range: rangeHeader,
      condition: fc.oneof(
        { weight: 4, arbitrary: fc.constant<ReadCondition>("none") },
        { weight: 2, arbitrary: fc.constantFrom<ReadCondition>("current", "weak", "stale", "star", "list") },
      ),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("stat" as const), cap: capArg, path: queryPath }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("list" as const),
      cap: capArg,
      path: fc.oneof({ weight: 2, arbitrary: fc.constant<PathArg>({ text: "" }) }, { weight: 3, arbitrary: queryPath }),
      limit: fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 6, arbitrary: fc.constantFrom("1", "2", "3") },
        { weight: 1, arbitrary: fc.constantFrom("1000", "0", "1001", "abc", "-1", "1.5", "", "01") },
      ),
      // Garbage only: real cursors are opaque, so each implementation follows its own.
      cursor: fc.oneof(
        { weight: 12, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom("!", "..", "a b", "%2F", "") },
      ),
      // Recursive listings (every file below, or folded at level 2), and depths refused.
      depth: fc.oneof(
        { weight: 6, arbitrary: fc.constant(undefined) },
        { weight: 4, arbitrary: fc.constantFrom("0", "2", "1") },
        { weight: 1, arbitrary: fc.constantFrom("x", "-1", "513", "") },
      ),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("delete" as const), cap: capArg, path: queryPath }) },
  // Folders: made, removed while empty (or refused), and met by writes, moves and listings.
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("mkdir" as const), cap: capArg, path: queryPath }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("rmdir" as const), cap: capArg, path: queryPath }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("move" as const), cap: capArg, body: moveBody }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("subdir" as const), cap: capArg, body: subdirBody }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("revoke" as const), target: fc.nat(1000) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("revokeChild" as const),
      cap: capArg,
      child: fc.oneof(fc.nat(1000), fc.constant("bogus" as const)),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("children" as const), cap: capArg }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("info" as const), cap: capArg }) },
  { weight: 4, arbitrary: fc.constant<Command>({ kind: "resume" }) },
);

const versionId: fc.Arbitrary<VersionIdArg> = fc.oneof(
  { weight: 6, arbitrary: fc.nat(3).map((mine) => ({ mine })) },
  { weight: 5, arbitrary: fc.nat(3).map((recent) => ({ recent })) },
  { weight: 3, arbitrary: fc.nat(1000).map((any) => ({ any })) },
  { weight: 1, arbitrary: fc.nat(3).map((unknown) => ({ unknown })) },
  {
    weight: 2,
    // Not ids: zero, a leading zero, signs, exponents, past 2^53, past 16 digits, a name.
    arbitrary: fc
      .constantFrom("0", "01", "-1", "+1", "1e1", "1.0", "abc", "9007199254740993", "99999999999999999", "１")
      .map((raw) => ({ raw })),
  },
);

/** Child caps (minted with various rights by `subdir`) more often than for other commands: scope and rights matter. */
const versionCap: fc.Arbitrary<CapArg> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(0) },
  { weight: 6, arbitrary: fc.constant("latest" as const) },
  { weight: 6, arbitrary: fc.nat(1000) },
  { weight: 1, arbitrary: fc.constantFrom<CapArg>("unknown", "malformed") },
);

const versionCommands: fc.Arbitrary<Command>[] = [
  fc.record({
    kind: fc.constant("versions" as const),
    cap: versionCap,
    path: queryPath,
    limit: fc.oneof(
      { weight: 5, arbitrary: fc.constant(undefined) },
      { weight: 4, arbitrary: fc.constantFrom("1", "2") },
      { weight: 1, arbitrary: fc.constantFrom("100", "0", "101", "abc", "", "01", "-1") },
    ),
    cursor: fc.oneof({ weight: 10, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: versionId }),
  }),
  ...(["readVersion", "restore", "redact"] as const).map((kind) =>
    fc.record({ kind: fc.constant(kind), cap: versionCap, id: versionId }),
  ),
];

const commandWithVersions: fc.Arbitrary<Command> = fc.oneof(
  { weight: 43, arbitrary: command },
  { weight: 5, arbitrary: versionCommands[0]! },
  { weight: 3, arbitrary: versionCommands[1]! },
  { weight: 3, arbitrary: versionCommands[2]! },
  { weight: 2, arbitrary: versionCommands[3]! },
);

/** Each sequence's roots keep the default history, or only the last 1 to 3 versions of each path. */
const keepVersions = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }) },
);
export const commandSequence = fc.record({
  keepVersions,
  commands: fc.array(commandWithVersions, { minLength: 5, maxLength: 25 }),
});
export type Sequence = { keepVersions: number | undefined; commands: Command[] };
