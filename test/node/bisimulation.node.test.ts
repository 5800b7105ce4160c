/**
 * Bisimulation: one contract, three implementations.
 *
 * Each random sequence of requests runs against the pure reference model
 * (test/model/vault-model.ts), an R2-backed root cap and a disk-backed root
 * cap, both served by the real launcher on Miniflare. Every observation must
 * be identical: status, error code, body, file bytes, validators, listings in
 * order, rights. R2 and disk are compared exactly (error messages included);
 * the model fixes the messages the contract fixes. Only what is per instance
 * by nature is normalised: tokens, urls and ids (mapped to the role of the
 * cap in the sequence), timestamps and the opaque list cursors, which each
 * implementation follows on its own.
 *
 * Versions are part of it: writes, deletes and moves record history, and
 * sequences list it, read, restore and redact versions through root and
 * child caps (the roots keep 1 to 3 versions per path, or the default). A
 * version's `actor` is a cap id, mapped to its role like every id, and `at`
 * a time; version ids and history cursors are compared as they are, since
 * each root's journal counts its own from 1.
 *
 * The sequences run as BISIM_STREAMS (2) seeded streams at once against the
 * one vault (each sequence has roots of its own), so the file's wall time is
 * not one request after another; BISIM_RUNS (100) sequences in all.
 *
 * Reproduce a failure (the message names the failing stream's seed and size):
 * BISIM_SEED=<seed> BISIM_STREAMS=1 BISIM_RUNS=<runs> npx vitest run --config vitest.node.config.ts test/node/bisimulation.node.test.ts
 * (add BISIM_PATH=<path> to replay only the shrunk counterexample).
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RIGHTS } from "../../shared/rights.ts";
import {
  type CapPick,
  hex,
  type Json,
  md5Hex,
  type Observation,
  type QueryFault,
  VaultModel,
  type VaultRequest,
} from "../model/vault-model.ts";
import { mintRoot, startTestVault, type TestVault } from "./test-vault.ts";

const NUM_RUNS = Number(process.env.BISIM_RUNS || 100);
const STREAMS = Math.max(1, Number(process.env.BISIM_STREAMS || 2));
const MAX_PAGES = 40;
const SEED = process.env.BISIM_SEED ? Number(process.env.BISIM_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const REPLAY_PATH = process.env.BISIM_PATH || undefined;

let vault: TestVault;
let sequence = 0;

beforeAll(async () => {
  vault = await startTestVault();
});
afterAll(async () => {
  await vault?.stop();
});

// ---- generators -------------------------------------------------------------

/**
 * A path argument: the string the server must receive, optionally with the
 * raw (pre-encoded) query form that decodes to it; or `reuse`, a path an
 * earlier command of the sequence used (so reads, moves and child caps meet
 * files that exist), resolved when the sequence runs.
 */
type PathArg = ResolvedPath | { reuse: number };
/** `fault`: the raw query does not decode to one path (see QueryFault). */
type ResolvedPath = { text: string | null; raw?: string; fault?: QueryFault };
/** In a JSON body (move, subdir) a path field holds any JSON value, or a `{ reuse }` marker. */
type JsonBody = string | Record<string, unknown>;

type CapArg = number | "latest" | "unknown" | "malformed";
type WriteCondition =
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
type ReadCondition = "none" | "current" | "weak" | "stale" | "star" | "list";

type Command =
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
type VersionIdArg = { mine: number } | { recent: number } | { any: number } | { unknown: number } | { raw: string };

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
const queryPath: fc.Arbitrary<PathArg> = fc.oneof(
  { weight: 18, arbitrary: reusedPath },
  { weight: 16, arbitrary: commonPath.map((text) => ({ text })) },
  { weight: 6, arbitrary: oddPath.map((text) => ({ text })) },
  { weight: 1, arbitrary: deepLongPath.map((text) => ({ text })) },
  { weight: 3, arbitrary: hostilePath.map((text) => ({ text })) },
  { weight: 1, arbitrary: rawQueryPath },
  { weight: 1, arbitrary: fc.constantFrom<PathArg>({ text: "" }, { text: null }) },
);
/** JSON carries what a query cannot: unpaired surrogates. */
const jsonPath: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 18, arbitrary: reusedPath },
  { weight: 16, arbitrary: commonPath },
  { weight: 6, arbitrary: oddPath },
  { weight: 1, arbitrary: deepLongPath },
  { weight: 3, arbitrary: hostilePath },
  { weight: 1, arbitrary: fc.constantFrom("\ud800", "a/\udc00b", "") },
);

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

const command: fc.Arbitrary<Command> = fc.oneof(
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
const commandSequence = fc.record({
  keepVersions,
  commands: fc.array(commandWithVersions, { minLength: 5, maxLength: 25 }),
});
type Sequence = { keepVersions: number | undefined; commands: Command[] };

// ---- one implementation over HTTP -------------------------------------------

/** An implementation reached over HTTP: the caps it minted in this sequence, by role. */
interface HttpImpl {
  name: "r2" | "disk";
  tokens: string[];
  ids: string[];
}

const UNKNOWN_TOKEN = "a".repeat(48);
const MALFORMED_TOKEN = "not-a-token";
const UNKNOWN_ID = "a".repeat(16);

function tokenFor(impl: HttpImpl, pick: CapPick): string {
  if ("bogus" in pick) return pick.bogus === "unknown" ? UNKNOWN_TOKEN : MALFORMED_TOKEN;
  return impl.tokens[pick.role] ?? UNKNOWN_TOKEN;
}

function pathQuery(path: string | null, raw: string | undefined): string[] {
  if (raw !== undefined) return [`path=${raw}`];
  return path === null ? [] : [`path=${encodeURIComponent(path)}`];
}

/** Sends one request and observes it, normalising only what is per instance. */
async function perform(
  impl: HttpImpl,
  request: VaultRequest,
  raw: string | undefined,
): Promise<{ observation: Observation; cursor: string | null }> {
  const base = `${vault.url}/object/${tokenFor(impl, request.cap)}`;
  const url = (route: string, query: string[]) => `${base}${route}${query.length ? `?${query.join("&")}` : ""}`;
  let response: Response;
  switch (request.op) {
    case "info":
      response = await fetch(base);
      break;
    case "revoke":
      response = await fetch(base, { method: "DELETE" });
      break;
    case "read": {
      const headers: Record<string, string> = {};
      if (request.range !== undefined) headers.range = request.range;
      if (request.ifNoneMatch !== undefined) headers["if-none-match"] = request.ifNoneMatch;
      response = await fetch(url("/file", pathQuery(request.path, raw)), { headers });
      break;
    }
    case "write": {
      const headers: Record<string, string> = {};
      if (request.contentType !== undefined) headers["content-type"] = request.contentType;
      if (request.ifMatch !== undefined) headers["if-match"] = request.ifMatch;
      if (request.ifNoneMatch !== undefined) headers["if-none-match"] = request.ifNoneMatch;
      response = await fetch(url("/file", pathQuery(request.path, raw)), {
        method: "PUT",
        headers,
        body: request.content,
      });
      break;
    }
    case "delete":
      response = await fetch(url("/file", pathQuery(request.path, raw)), { method: "DELETE" });
      break;
    case "mkdir":
    case "rmdir":
      response = await fetch(url("/folder", pathQuery(request.path, raw)), {
        method: request.op === "mkdir" ? "PUT" : "DELETE",
      });
      break;
    case "stat":
      response = await fetch(url("/stat", pathQuery(request.path, raw)));
      break;
    case "list": {
      const query = pathQuery(request.path, raw);
      if (request.limit !== undefined) query.push(`limit=${encodeURIComponent(request.limit)}`);
      if (request.cursor !== undefined) query.push(`cursor=${encodeURIComponent(request.cursor)}`);
      if (request.depth !== undefined) query.push(`depth=${encodeURIComponent(request.depth)}`);
      response = await fetch(url("/list", query));
      break;
    }
    case "move":
      response = await fetch(`${base}/move`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: request.body,
      });
      break;
    case "subdir":
      response = await fetch(`${base}/subdir`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: request.body,
      });
      break;
    case "children":
      response = await fetch(`${base}/children`);
      break;
    case "revokeChild": {
      const child = "role" in request.child ? (impl.ids[request.child.role] ?? UNKNOWN_ID) : UNKNOWN_ID;
      response = await fetch(`${base}/children/${child}`, { method: "DELETE" });
      break;
    }
    case "versions": {
      const query = pathQuery(request.path, raw);
      if (request.limit !== undefined) query.push(`limit=${encodeURIComponent(request.limit)}`);
      if (request.cursor !== undefined) query.push(`cursor=${encodeURIComponent(request.cursor)}`);
      response = await fetch(url("/versions", query));
      break;
    }
    case "readVersion":
      response = await fetch(`${base}/versions/${encodeURIComponent(request.id)}`);
      break;
    case "restore":
    case "redact":
      response = await fetch(`${base}/versions/${encodeURIComponent(request.id)}/${request.op}`, { method: "POST" });
      break;
  }
  return observe(impl, response, request.op);
}

const COMPARED_HEADERS = ["content-type", "etag", "content-range", "last-modified", "accept-ranges"];
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function observe(
  impl: HttpImpl,
  response: Response,
  op: VaultRequest["op"],
): Promise<{ observation: Observation; cursor: string | null }> {
  const isFileRead = op === "read" || op === "readVersion";
  const headers: Record<string, string> = {};
  for (const name of COMPARED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  if (
    headers["last-modified"] !== undefined &&
    new Date(headers["last-modified"]).toUTCString() === headers["last-modified"]
  ) {
    headers["last-modified"] = "<time>";
  }
  const bytes = new Uint8Array(await response.arrayBuffer());
  const content = isFileRead && (response.status === 200 || response.status === 206);
  if (content) headers["content-length"] = response.headers.get("content-length") ?? "(none)";
  let body: Json;
  let cursor: string | null = null;
  if (content) body = { bytes: hex(bytes) };
  else if (headers["content-type"] === "application/json") {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as Json;
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) && typeof parsed.cursor === "string")
      cursor = parsed.cursor;
    body = normaliseJson(impl, parsed, "", op === "versions");
  } else body = bytes.length === 0 ? null : { unexpected: new TextDecoder().decode(bytes) };
  return { observation: { status: response.status, headers, body }, cursor };
}

/**
 * Maps per-instance values to comparable ones; anything unrecognised is left raw so that it shows as a difference.
 * Version ids and their cursors are NOT per instance: each root (one per backend per sequence) has a journal of its
 * own counting from 1, so R2, disk and the model must agree on them exactly. A version's `actor` is a cap id (per
 * instance, so mapped to its role like `id`) and its `at` a time.
 */
function normaliseJson(impl: HttpImpl, value: Json, key = "", versionPage = false): Json {
  if (Array.isArray(value)) {
    const items = key === "children" ? orderChildren(value) : value;
    return items.map((item) => normaliseJson(impl, item));
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normaliseJson(impl, v, k, versionPage)]));
  }
  if (typeof value !== "string") return value;
  switch (key) {
    case "token": {
      const role = impl.tokens.indexOf(value);
      return role >= 0 ? `<token:${role}>` : value;
    }
    case "url": {
      const role = impl.tokens.findIndex((token) => value === `${vault.url}/object/${token}`);
      return role >= 0 ? `<url:${role}>` : value;
    }
    case "id":
    case "parent":
    case "actor": {
      const role = impl.ids.indexOf(value);
      return role >= 0 ? `<id:${role}>` : value;
    }
    case "createdAt":
    case "expiresAt":
    case "modified":
    case "at":
      return ISO_TIME.test(value) && new Date(value).toISOString() === value ? "<time>" : value;
    case "cursor":
      return versionPage ? value : "<cursor>";
    default:
      return value;
  }
}

/**
 * Children are listed by creation time; two minted within the same
 * millisecond have no defined order, so ties (and only ties) are put in mint
 * order. An order that is not by creation time is left alone, to show.
 */
function orderChildren(children: Json[]): Json[] {
  const created = children.map((c) =>
    c !== null && typeof c === "object" && !Array.isArray(c) ? String(c.createdAt) : "",
  );
  if (created.some((t, i) => i > 0 && t < created[i - 1]!)) return children;
  return children
    .map((child, i) => ({ child, i }))
    .sort((a, b) => (created[a.i]! < created[b.i]! ? -1 : created[a.i]! > created[b.i]! ? 1 : a.i - b.i))
    .map(({ child }) => child);
}

// ---- running a sequence --------------------------------------------------------

function pickCap(arg: CapArg, model: VaultModel): CapPick {
  if (arg === "latest") return { role: model.capCount - 1 };
  return typeof arg === "number" ? { role: arg % model.capCount } : { bogus: arg };
}

const STALE_ETAG = md5Hex(new TextEncoder().encode("an old version"));

/** Paths that named a file or folder when last used in the sequence (the model decides), for `reuse`. */
type History = string[];

/** After a request the model accepted, remembers the paths that now exist (only those a query can carry). */
function remember(history: History, request: VaultRequest, status: number): void {
  if (status >= 300) return;
  const paths: unknown[] = [];
  if (request.op === "write") paths.push(request.path);
  if (request.op === "move" || request.op === "subdir") {
    // A successful request's body parsed; an empty one counts as `{}`.
    const body = JSON.parse(request.body || "{}") as Record<string, unknown>;
    paths.push(request.op === "move" ? body.to : body.path);
  }
  for (const path of paths) if (typeof path === "string" && path !== "" && path.isWellFormed()) history.push(path);
}

function resolvePath(arg: PathArg, history: History): ResolvedPath {
  if (!("reuse" in arg)) return arg;
  return { text: history.length === 0 ? "a" : history[history.length - 1 - (arg.reuse % history.length)]! };
}

function resolveBody(body: JsonBody, history: History): string {
  if (typeof body === "string") return body;
  const resolved = Object.fromEntries(
    Object.entries(body).map(([key, value]) => [
      key,
      value !== null && typeof value === "object" && "reuse" in value
        ? resolvePath(value as PathArg, history).text
        : value,
    ]),
  );
  return JSON.stringify(resolved);
}

/** Turns a generated command into a request, resolving paths, etags and roles against the sequence so far. */
function toRequest(
  generated: Command,
  model: VaultModel,
  history: History,
): { request: VaultRequest; raw?: string } | null {
  const cmd = "path" in generated ? { ...generated, path: resolvePath(generated.path, history) } : generated;
  const resolved = withFault(toPlainRequest(cmd, model, history), "path" in cmd ? cmd.path.fault : undefined);
  return resolved;
}

function withFault(resolved: { request: VaultRequest; raw?: string } | null, fault: QueryFault | undefined) {
  if (resolved && fault && "path" in resolved.request)
    (resolved.request as { queryFault?: QueryFault }).queryFault = fault;
  return resolved;
}

type ResolvedCommand =
  | Exclude<Command, { path: PathArg }>
  | (Extract<Command, { path: PathArg }> & { path: ResolvedPath });

function toPlainRequest(
  cmd: ResolvedCommand,
  model: VaultModel,
  history: History,
): { request: VaultRequest; raw?: string } | null {
  switch (cmd.kind) {
    case "write": {
      const cap = pickCap(cmd.cap, model);
      const current = ("role" in cap ? model.etagAt(cap.role, cmd.path.text) : null) ?? md5Hex(new Uint8Array([1]));
      const conditions: Record<WriteCondition, { ifMatch?: string; ifNoneMatch?: string }> = {
        none: {},
        ifMatch: { ifMatch: `"${current}"` },
        ifMatchBare: { ifMatch: current },
        ifMatchWeak: { ifMatch: `W/"${current}"` },
        ifMatchList: { ifMatch: `"${STALE_ETAG}", "${current}"` },
        ifMatchStale: { ifMatch: `"${STALE_ETAG}"` },
        ifMatchStar: { ifMatch: "*" },
        ifNoneMatchStar: { ifNoneMatch: "*" },
        ifNoneMatch: { ifNoneMatch: `"${current}"` },
        ifNoneMatchStale: { ifNoneMatch: `"${STALE_ETAG}"` },
      };
      const request: VaultRequest = {
        op: "write",
        cap,
        path: cmd.path.text,
        content: cmd.content,
        ...conditions[cmd.condition],
      };
      if (cmd.contentType !== undefined) request.contentType = cmd.contentType;
      return { request, ...raw(cmd.path) };
    }
    case "read": {
      const cap = pickCap(cmd.cap, model);
      const current = ("role" in cap ? model.etagAt(cap.role, cmd.path.text) : null) ?? STALE_ETAG;
      const ifNoneMatch = {
        none: undefined,
        current: `"${current}"`,
        weak: `W/"${current}"`,
        stale: `"${STALE_ETAG}"`,
        star: "*",
        list: `"${STALE_ETAG}", W/"${current}"`,
      }[cmd.condition];
      const request: VaultRequest = { op: "read", cap, path: cmd.path.text };
      if (cmd.range !== undefined) request.range = cmd.range;
      if (ifNoneMatch !== undefined) request.ifNoneMatch = ifNoneMatch;
      return { request, ...raw(cmd.path) };
    }
    case "stat":
    case "delete":
    case "mkdir":
    case "rmdir":
      return { request: { op: cmd.kind, cap: pickCap(cmd.cap, model), path: cmd.path.text }, ...raw(cmd.path) };
    case "list": {
      const request: VaultRequest = { op: "list", cap: pickCap(cmd.cap, model), path: cmd.path.text };
      if (cmd.limit !== undefined) request.limit = cmd.limit;
      if (cmd.cursor !== undefined) request.cursor = cmd.cursor;
      if (cmd.depth !== undefined) request.depth = cmd.depth;
      return { request, ...raw(cmd.path) };
    }
    case "move":
    case "subdir":
      return { request: { op: cmd.kind, cap: pickCap(cmd.cap, model), body: resolveBody(cmd.body, history) } };
    case "revoke":
      // Any non-root cap, live or already dead.
      return model.capCount < 2
        ? null
        : { request: { op: "revoke", cap: { role: 1 + (cmd.target % (model.capCount - 1)) } } };
    case "revokeChild": {
      const child: CapPick = cmd.child === "bogus" ? { bogus: "unknown" } : { role: cmd.child % model.capCount };
      return { request: { op: "revokeChild", cap: pickCap(cmd.cap, model), child } };
    }
    case "children":
    case "info":
      return { request: { op: cmd.kind, cap: pickCap(cmd.cap, model) } };
    case "resume":
      return null; // run by runSequence, from the saved listing
    case "versions": {
      const request: VaultRequest = { op: "versions", cap: pickCap(cmd.cap, model), path: cmd.path.text };
      if (cmd.limit !== undefined) request.limit = cmd.limit;
      if (cmd.cursor !== undefined) request.cursor = versionIdFor(cmd.cursor, model, request.cap);
      return { request, ...raw(cmd.path) };
    }
    case "readVersion":
    case "restore":
    case "redact": {
      const cap = pickCap(cmd.cap, model);
      return { request: { op: cmd.kind, cap, id: versionIdFor(cmd.id, model, cap) } };
    }
  }
}

function versionIdFor(arg: VersionIdArg, model: VaultModel, cap: CapPick): string {
  const newest = model.newestVersionId;
  if ("raw" in arg) return arg.raw;
  if ("unknown" in arg) return String(newest + 1 + arg.unknown);
  if ("mine" in arg) {
    // None it can name: the newest of the root, which it may or may not reach.
    const mine = "role" in cap ? model.versionIdsOf(cap.role) : [];
    return String(mine.length > 0 ? mine[arg.mine % mine.length] : Math.max(1, newest));
  }
  if (newest === 0) return "1";
  return String("recent" in arg ? Math.max(1, newest - arg.recent) : 1 + (arg.any % newest));
}

function raw(path: ResolvedPath): { raw?: string } {
  return path.raw === undefined ? {} : { raw: path.raw };
}

type Trace = { model: Observation[]; r2: Observation[]; disk: Observation[] };

/** Runs one request everywhere; a list follows each implementation's own cursors to the end. */
type Cursors = Record<keyof Trace, string | null>;

/**
 * Runs one request everywhere; a list follows each implementation's own
 * cursors to the end. `resume` starts a list at each one's saved cursor.
 */
async function step(
  model: VaultModel,
  impls: HttpImpl[],
  request: VaultRequest,
  rawPath: string | undefined,
  resume?: Cursors,
): Promise<Trace & { minted?: number; firstCursors: Cursors }> {
  const startAt = (name: keyof Trace): VaultRequest =>
    resume && request.op === "list" ? { ...request, cursor: resume[name] ?? "" } : request;
  const first = model.apply(startAt("model"));
  const trace: Trace = { model: [first.observation], r2: [], disk: [] };
  const firstCursors: Cursors = { model: first.cursor ?? null, r2: null, disk: null };
  let modelCursor = first.cursor ?? null;
  const paged = request.op === "list" || request.op === "versions";
  while (paged && modelCursor !== null && trace.model.length < MAX_PAGES) {
    const next = model.apply({ ...request, cursor: modelCursor });
    trace.model.push(next.observation);
    modelCursor = next.cursor ?? null;
  }
  await Promise.all(
    impls.map(async (impl) => {
      let page = await perform(impl, startAt(impl.name), rawPath);
      firstCursors[impl.name] = page.cursor;
      if (request.op === "subdir" && first.minted !== undefined && page.observation.status === 201) {
        // Register the new cap under the role the model gave it, then normalise again.
        const body = page.observation.body as { token: string; id: string };
        impl.tokens[first.minted] = body.token;
        impl.ids[first.minted] = body.id;
        page = { ...page, observation: { ...page.observation, body: normaliseJson(impl, body) } };
      }
      trace[impl.name].push(page.observation);
      while (paged && page.cursor !== null && trace[impl.name].length < MAX_PAGES) {
        page = await perform(impl, { ...request, cursor: page.cursor }, rawPath);
        trace[impl.name].push(page.observation);
      }
    }),
  );
  return first.minted === undefined ? { ...trace, firstCursors } : { ...trace, firstCursors, minted: first.minted };
}

/** The model's observation as a matcher: a message it leaves unspecified matches any string. */
function asExpected(observation: Observation): unknown {
  const body = observation.body as { error?: { code: string; message: string | null } } | null;
  if (body?.error && body.error.message === null) {
    return { ...observation, body: { error: { code: body.error.code, message: expect.any(String) } } };
  }
  return observation;
}

const mintBisimRoot = (backend: "r2" | "disk", prefix: string, keepVersions: number | undefined) =>
  mintRoot(vault, { backend, prefix, label: "bisim", keepVersions });

let commandsRun = 0;
/** `op status` (and whether a child cap was used) → how often the model answered so; printed with BISIM_STATS=1. */
const outcomes = new Map<string, number>();

async function runSequence(commands: Command[], keepVersions?: number): Promise<void> {
  // Fixed-width, so the prefix (which counts towards the key limit) has the same length in every run and replay.
  const n = String(++sequence).padStart(6, "0");
  const [r2Root, diskRoot] = await Promise.all([
    mintBisimRoot("r2", `bisim/${n}/`, keepVersions),
    mintBisimRoot("disk", `bisim/${n}`, keepVersions),
  ]);
  const model = new VaultModel(`bisim/${n}/`, "bisim", keepVersions);
  const impls: HttpImpl[] = [
    { name: "r2", tokens: [r2Root.token], ids: [r2Root.id] },
    { name: "disk", tokens: [diskRoot.token], ids: [diskRoot.id] },
  ];
  const log: string[] = [];
  const history: History = [];
  let saved: { request: VaultRequest; raw?: string; cursors: Cursors } | null = null;
  const check = async (where: string, request: VaultRequest, raw?: string, resume?: Cursors): Promise<Observation> => {
    const trace = await step(model, impls, request, raw, resume);
    if (request.op === "list" && !resume && Object.values(trace.firstCursors).every((c) => c !== null)) {
      saved = { request, cursors: trace.firstCursors, ...(raw === undefined ? {} : { raw }) };
    }
    log.push(`${where}\n    model: ${show(trace.model)}`);
    const context = () =>
      `${where}\n  model: ${show(trace.model)}\n  r2:    ${show(trace.r2)}\n  disk:  ${show(trace.disk)}\nearlier in this sequence:\n  ${log.slice(0, -1).join("\n  ")}`;
    expect(trace.disk, `R2 and disk differ at ${context()}`).toEqual(trace.r2);
    expect(trace.r2, `R2 and disk agree but differ from the model at ${context()}`).toEqual(
      trace.model.map(asExpected),
    );
    return trace.model[0]!;
  };
  for (const [index, cmd] of commands.entries()) {
    if (cmd.kind === "resume") {
      if (!saved) continue;
      const { request, raw, cursors } = saved;
      commandsRun++;
      const observed = await check(
        `command ${index} resume ${describeRequest(request)} from its first cursor`,
        request,
        raw,
        cursors,
      );
      outcomes.set(`resume ${observed.status}`, (outcomes.get(`resume ${observed.status}`) ?? 0) + 1);
      continue;
    }
    const resolved = toRequest(cmd, model, history);
    if (!resolved) continue;
    commandsRun++;
    const where = `command ${index} ${describeRequest(resolved.request)}${resolved.raw ? ` (raw query path ${resolved.raw})` : ""}`;
    const observed = await check(where, resolved.request, resolved.raw);
    remember(history, resolved.request, observed.status);
    const byChild = "role" in resolved.request.cap && resolved.request.cap.role > 0 ? " (child)" : "";
    const outcome = `${resolved.request.op} ${observed.status}${byChild}`;
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  // Finally the whole tree, through the root cap: every folder listed, every file read, so no
  // difference in state stays hidden because no command happened to look at it.
  const folders = [""];
  while (folders.length > 0) {
    const folder = folders.shift()!;
    const listing = await check(`final sweep: list ${JSON.stringify(folder)}`, {
      op: "list",
      cap: { role: 0 },
      path: folder,
    });
    for (const entry of (listing.body as { entries: { name: string; type: string }[] }).entries) {
      const path = folder === "" ? entry.name : `${folder}/${entry.name}`;
      if (entry.type === "dir") folders.push(path);
      else await check(`final sweep: read ${JSON.stringify(path)}`, { op: "read", cap: { role: 0 }, path });
    }
  }
  // And the whole history: every path that ever had a version, and every id allocated (pruned and redacted ones
  // included, so bytes a prune or a redaction took from a version that still shares them would show). Reads only,
  // so they run at once.
  const ids = Array.from({ length: model.newestVersionId }, (_, i) => String(i + 1));
  await Promise.all([
    ...model.versionedPaths.map((path) =>
      check(`final sweep: versions ${JSON.stringify(path)}`, { op: "versions", cap: { role: 0 }, path }),
    ),
    ...ids.map((id) => check(`final sweep: version ${id}`, { op: "readVersion", cap: { role: 0 }, id })),
  ]);
}

function describeRequest(request: VaultRequest): string {
  return JSON.stringify(request, (_key, value: unknown) => (value instanceof Uint8Array ? `hex:${hex(value)}` : value));
}

function show(observations: Observation[]): string {
  const text = JSON.stringify(observations.length === 1 ? observations[0] : observations);
  return text.length > 3000 ? `${text.slice(0, 3000)}…` : text;
}

// ---- sequences that once told the implementations apart ---------------------------

const text = (t: string) => new TextEncoder().encode(t);
const pathArg = (t: string): PathArg => ({ text: t });
const write = (cap: CapArg, path: string, condition: WriteCondition = "none"): Command => ({
  kind: "write",
  cap,
  path: pathArg(path),
  content: text(path),
  condition,
});
const subdir = (cap: CapArg, path: string): Command => ({ kind: "subdir", cap, body: { path } });

const folder = (kind: "mkdir" | "rmdir", cap: CapArg, path: string): Command => ({ kind, cap, path: pathArg(path) });

/** Each ran differently on R2 and disk (or against the model) before its fix; kept so it never does again. */
const KNOWN: [string, Command[]][] = [
  [
    "folders: made and listed while empty, kept by the last delete and move out, removed only while empty",
    [
      folder("mkdir", 0, "e/f"),
      { kind: "list", cap: 0, path: pathArg("e") },
      { kind: "list", cap: 0, path: pathArg("e/f") },
      { kind: "list", cap: 0, path: pathArg(""), depth: "0" },
      write(0, "e/f"),
      write(0, "e/f/g"),
      folder("rmdir", 0, "e/f"),
      { kind: "delete", cap: 0, path: pathArg("e/f/g") },
      { kind: "stat", cap: 0, path: pathArg("e/f") },
      folder("rmdir", 0, "e"),
      folder("rmdir", 0, "e/f"),
      { kind: "list", cap: 0, path: pathArg("e") },
      write(0, "m/n"),
      { kind: "move", cap: 0, body: { from: "m/n", to: "n" } },
      { kind: "list", cap: 0, path: pathArg("m") },
      folder("mkdir", 0, "n/x"),
      folder("mkdir", 0, "n"),
      folder("rmdir", 0, "n"),
      folder("rmdir", 0, ""),
      folder("mkdir", 0, ""),
      subdir(0, "k"),
      write(1, "z"),
      { kind: "delete", cap: 1, path: pathArg("z") },
      { kind: "list", cap: 0, path: pathArg("k") },
      { kind: "list", cap: 1, path: pathArg(""), depth: "2" },
      folder("rmdir", 0, "k"),
      { kind: "stat", cap: 0, path: pathArg("k") },
    ],
  ],
  [
    "quotas: a child's limits bind its writes, superseded and deleted bytes keep counting, looser limits are refused",
    [
      { kind: "subdir", cap: 0, body: { path: "q", maxBytes: 6, maxFiles: 2 } },
      { kind: "subdir", cap: 1, body: { path: "", maxBytes: 7 } },
      write(1, "aa"),
      write(1, "aa"),
      write(1, "bbb"),
      { kind: "info", cap: 1 },
      { kind: "delete", cap: 1, path: pathArg("aa") },
      write(1, "c"),
      write(0, "q/dd"),
      write(1, "bbb"),
      { kind: "move", cap: 1, body: { from: "bbb", to: "e" } },
      { kind: "subdir", cap: 1, body: { path: "", maxFiles: 1 } },
      write(3, "f"),
      { kind: "info", cap: 3 },
      { kind: "info", cap: 0 },
    ],
  ],
  [
    "a file below a cap's root whose name is a path only there (`c:`, `~x`) is listed, and a page may end on it",
    [
      write(0, "a b/c:"),
      write(0, "a b/~x"),
      write(0, "a b/~y"),
      { kind: "list", cap: 0, path: pathArg(""), limit: "1" },
      { kind: "list", cap: 0, path: pathArg("a b"), limit: "1" },
      subdir(0, "a b"),
      { kind: "list", cap: 1, path: pathArg("") },
    ],
  ],
  [
    "a weak If-Match names the same etag on R2 as on disk",
    [write(0, "a"), write(0, "a", "ifMatchWeak"), write(0, "a", "ifMatchList"), write(0, "a", "ifMatchBare")],
  ],
  [
    "a child cap whose root became a file cannot write beneath it",
    [subdir(0, "a"), write(0, "a"), write(1, "b"), { kind: "list", cap: 1, path: pathArg("") }, subdir(1, "")],
  ],
  [
    "a folder a child cap left empty (its root) does not block a file of that name",
    [
      write(0, "a/f"),
      subdir(0, "a"),
      { kind: "delete", cap: 1, path: pathArg("f") },
      write(0, "a"),
      { kind: "list", cap: 1, path: pathArg("") },
      write(1, "g"),
    ],
  ],
  [
    "a child root made by a refused write does not block a file or a move of that name",
    [
      subdir(0, "b"),
      write(1, "x", "ifMatchStale"),
      write(0, "b"),
      subdir(0, "c"),
      write(2, "x", "ifMatchStale"),
      write(0, "d"),
      { kind: "move", cap: 0, body: { from: "d", to: "c" } },
      { kind: "stat", cap: 0, path: pathArg("c") },
    ],
  ],
  [
    "a content type with a tab, or longer than 256 characters, comes back as stored",
    [
      { kind: "write", cap: 0, path: pathArg("t"), content: text("t"), contentType: "a\tb", condition: "none" },
      {
        kind: "write",
        cap: 0,
        path: pathArg("long"),
        content: text("l"),
        contentType: `text/plain; x=${"y".repeat(300)}`,
        condition: "none",
      },
      { kind: "stat", cap: 0, path: pathArg("t") },
      { kind: "read", cap: 0, path: pathArg("long"), condition: "none" },
    ],
  ],
  [
    "a listing resumed after its folder changed continues by name, and is empty once the folder is a file",
    [
      write(0, "d/1"),
      write(0, "d/2"),
      write(0, "d/3"),
      { kind: "list", cap: 0, path: pathArg("d"), limit: "1" },
      { kind: "delete", cap: 0, path: pathArg("d/2") },
      write(0, "d/0"),
      { kind: "resume" },
      { kind: "delete", cap: 0, path: pathArg("d/1") },
      { kind: "delete", cap: 0, path: pathArg("d/3") },
      { kind: "delete", cap: 0, path: pathArg("d/0") },
      { kind: "resume" },
      write(0, "d"),
      { kind: "resume" },
    ],
  ],
  [
    "a file's versions end with cursor null on a page that is exactly full",
    [
      write(0, "f"),
      write(0, "f"),
      { kind: "versions", cap: 0, path: pathArg("f"), limit: "1" },
      { kind: "versions", cap: 0, path: pathArg("f"), limit: "2" },
    ],
  ],
];

it.each(KNOWN)("%s", async (_name, commands) => {
  await runSequence(commands);
});

// ---- the property -----------------------------------------------------------------

/** One seeded stream of `numRuns` sequences; its failure message says how to replay it alone. */
async function checkStream(seed: number, numRuns: number): Promise<fc.RunDetails<[Sequence]>> {
  const started = Date.now();
  const details = await fc.check(
    fc.asyncProperty(commandSequence, async ({ commands, keepVersions }) => {
      await runSequence(commands, keepVersions);
    }),
    { seed, numRuns, ...(REPLAY_PATH ? { path: REPLAY_PATH } : {}), interruptAfterTimeLimit: 600_000 },
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (details.failed) {
    const replay = `BISIM_SEED=${details.seed} BISIM_STREAMS=1 BISIM_RUNS=${numRuns}`;
    const repro = `${replay} BISIM_PATH=${details.counterexamplePath ?? ""} npx vitest run --config vitest.node.config.ts test/node/bisimulation.node.test.ts`;
    const counterexample = details.counterexample
      ? JSON.stringify(details.counterexample[0], (_, v: unknown) => (v instanceof Uint8Array ? `hex:${hex(v)}` : v), 1)
      : "(none)";
    const cause =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(
      `bisimulation failed after ${details.numRuns} sequences (${seconds}s), seed ${details.seed}, path ${details.counterexamplePath}\n` +
        `reproduce: ${repro}\n(without BISIM_PATH it re-runs all ${numRuns} sequences of this stream; with it only the shrunk one)\n` +
        `shrunk counterexample:\n${counterexample}\n\n${cause}`,
    );
  }
  return details;
}

it(`model, R2 and disk answer every random sequence alike (${NUM_RUNS} sequences)`, async () => {
  const started = Date.now();
  // Stream i gets seed SEED + i and an equal share of the runs.
  const streams = Array.from({ length: STREAMS }, (_, i) => ({
    seed: (SEED + i) | 0,
    runs: Math.floor(NUM_RUNS / STREAMS) + (i < NUM_RUNS % STREAMS ? 1 : 0),
  }));
  const results = await Promise.allSettled(streams.map(({ seed, runs }) => checkStream(seed, runs)));
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
  const all = results.map((r) => (r as PromiseFulfilledResult<fc.RunDetails<[Sequence]>>).value);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const ran = all.reduce((n, details) => n + details.numRuns, 0);
  console.log(
    `bisimulation: seeds ${streams.map((s) => s.seed).join(", ")}, ${ran} sequences, ${commandsRun} commands, ${seconds}s`,
  );
  if (process.env.BISIM_STATS)
    console.log(
      [...outcomes]
        .sort()
        .map(([k, v]) => `${k}: ${v}`)
        .join("\n"),
    );
  for (const details of all) expect(details.interrupted).toBe(false);
  if (!REPLAY_PATH) expect(ran).toBe(NUM_RUNS);
}, 900_000);
