/**
 * The RPC fuzz's case generators, apart from how a case is sent and judged
 * (fuzz-rpc.ts): a seed must mean the same sessions on both backends.
 */
import fc from "fast-check";
import { RIGHTS } from "../shared/rights.ts";
import { pathText } from "./fuzz-paths.ts";
import { role, type VersionPick, versionId } from "./surface-cases.ts";
import type { Role } from "./surface-target.ts";

/**
 * Cap'n Web sessions in capnweb's wire format (one JSON message a line):
 * pushes of calls on the main cap or on an earlier push's answer (or on ids
 * that name nothing), with method names real and not (the `#` fields,
 * `constructor`, `__proto__`, capnweb's own), every argument shape capnweb
 * can encode, pulls of real and missing ids, and the other message types.
 * Symbolic until sent: version ids and the hashes a case may see are
 * resolved against the backend under test.
 */
export interface RpcCase {
  role: Role;
  /** Half the cases: real methods on live references only, so the batch runs and each call is judged alone. */
  wellFormed: boolean;
  lines: RpcLine[];
}

export type Arg =
  | { value: unknown }
  | { path: string }
  | { version: VersionPick }
  | { bytes: string }
  | { ref: number; via?: string[] }
  | { since: VersionPick };

export type RpcLine =
  | { push: { on: number; path: (string | number)[]; args: Arg[] | null } }
  | { pull: number | "last" | "each" }
  | { raw: string };

const REAL = [
  "read",
  "readText",
  "write",
  "delete",
  "move",
  "stat",
  "list",
  "subdir",
  "info",
  "children",
  "revoke",
  "versions",
  "readVersion",
  "restore",
  "redact",
  "watch",
  "share",
];
const HIDDEN = [
  "#token",
  "#cap",
  "#context",
  "#main",
  "#call",
  "constructor",
  "__proto__",
  "prototype",
  "toString",
  "valueOf",
  "toJSON",
  "then",
  "catch",
  "hasOwnProperty",
  "__defineGetter__",
  "__lookupGetter__",
  "dup",
  "map",
  "onRpcBroken",
  "dispose",
  "call",
  "apply",
  "bind",
  "length",
  "name",
  "caller",
  "stop",
  "fetch",
  "",
  0,
  "0",
];

const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...REAL) },
  { weight: 2, arbitrary: fc.constantFrom<string | number>(...HIDDEN) },
);

const scalar = fc.oneof(
  fc.constantFrom<unknown>(null, true, 0, -1, 1.5, 1e308, "", "x".repeat(70_000)),
  fc.string({ maxLength: 20 }),
  fc.integer(),
);

/** capnweb's encoded special values, as a hostile peer would send them. */
const special = fc.constantFrom<unknown>(
  ["undefined"],
  ["date", 0],
  ["date", null],
  ["bigint", "123"],
  ["inf"],
  ["nan"],
  ["error", "Error", "injected"],
  ["error", "TypeError", "x", "stack", { code: "path_escapes" }],
  ["export", -1],
  ["promise", -1],
  ["export", "x"],
  ["headers", [["a", "b"]]],
  ["request", "http://127.0.0.1:1/", {}],
  ["response", null, {}],
  ["blob", "text/plain", ["undefined"]],
  ["readable", 1],
  ["writable", -1],
  ["url", "file:///etc/passwd"],
  ["bytes", "AAEC", "Uint16Array"],
  ["bytes", "AA==", "Nope"],
  ["remap", 0, [], [], []],
  ["remap", 0, ["list"], [["import", 0]], [["pipeline", 0, ["info"], []]]],
  ["nope"],
  [],
  [["a", "b"]],
  [[["read"]]],
);

const options = fc.record(
  {
    cursor: fc.constantFrom<unknown>("1", "", "AAAA", 5, null),
    limit: fc.constantFrom<unknown>(1, 0, 1001, -1, 1.5, "2"),
    depth: fc.constantFrom<unknown>(0, 1, 513, -1),
    rights: fc.oneof(
      fc.subarray([...RIGHTS]).map((r) => [r]),
      fc.constantFrom<unknown>([["admin"]], "read", null),
    ),
    ttlSeconds: fc.constantFrom<unknown>(1, 3600, 0, -1, "60"),
    label: fc.constantFrom<unknown>("rpc", "\u202e", "x".repeat(300)),
    overwrite: fc.constantFrom<unknown>(true, false, "yes"),
    since: fc.constantFrom<unknown>("0", "1", "x"),
    contentType: fc.constantFrom<unknown>("text/plain", "", 5),
    ifMatch: fc.constantFrom<unknown>("*", '"x"', "sha256:00"),
    ifNoneMatch: fc.constantFrom<unknown>("*"),
    unknown: fc.constant<unknown>(1),
  },
  { requiredKeys: [] },
);

function arg(planted: readonly string[], hostile: boolean): fc.Arbitrary<Arg> {
  const plain = [
    { weight: 8, arbitrary: pathText(planted).map((path): Arg => ({ path })) },
    { weight: 3, arbitrary: versionId.map((version): Arg => ({ version })) },
    { weight: 3, arbitrary: options.map((value): Arg => ({ value })) },
    { weight: 2, arbitrary: scalar.map((value): Arg => ({ value })) },
    {
      weight: 1,
      arbitrary: fc.uint8Array({ maxLength: 32 }).map((b): Arg => ({ bytes: Buffer.from(b).toString("base64") })),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({ ref: fc.integer({ min: 0, max: 6 }), via: fc.constantFrom(["info"], ["read"], ["stat"]) })
        .map(({ ref, via }): Arg => ({ ref, via: [...via] })),
    },
  ];
  // Values capnweb reads without aborting: a batch holding one still runs, so the call meets it.
  const encodable = fc.constantFrom<unknown>(
    ["undefined"],
    ["date", 0],
    ["bigint", "123"],
    ["inf"],
    ["nan"],
    ["error", "Error", "injected"],
    ["export", -1],
    ["promise", -1],
    ["headers", [["a", "b"]]],
    ["request", "http://127.0.0.1:1/", {}],
    ["url", "file:///etc/passwd"],
    ["bytes", "AAEC", "Uint16Array"],
    ["remap", 0, [], [], []],
  );
  plain.push({ weight: 1, arbitrary: encodable.map((value): Arg => ({ value })) });
  if (!hostile) return fc.oneof(...plain);
  return fc.oneof(
    ...plain,
    { weight: 2, arbitrary: special.map((value) => ({ value })) },
    { weight: 1, arbitrary: fc.constant({ bytes: Buffer.from(new Uint8Array(1 << 20)).toString("base64") }) },
    {
      weight: 2,
      arbitrary: fc
        .record({
          ref: fc.integer({ min: -1, max: 6 }),
          via: fc.option(fc.constantFrom(["info"], ["read"], []), { nil: undefined }),
        })
        .map(({ ref, via }): Arg => (via === undefined ? { ref } : { ref, via: [...via] })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        { value: JSON.parse('{"__proto__":{"rights":[["admin"]]}}') },
        { value: { toJSON: 1, constructor: { prototype: 1 } } },
        { value: [[]] },
        { value: JSON.parse(`${"[".repeat(70)}${"]".repeat(70)}`) },
        { value: JSON.parse(`${"[[".repeat(30)}1${"]]".repeat(30)}`) },
      ) as fc.Arbitrary<Arg>,
    },
  );
}

function rpcLines(planted: readonly string[], hostile: boolean): fc.Arbitrary<RpcLine[]> {
  const push = fc
    .record({
      on: fc.oneof(
        { weight: 6, arbitrary: fc.constant(0) },
        { weight: 3, arbitrary: fc.integer(hostile ? { min: -2, max: 8 } : { min: 1, max: 8 }) },
      ),
      path: hostile
        ? fc.oneof(
            { weight: 10, arbitrary: method.map((m): (string | number)[] => [m]) },
            { weight: 1, arbitrary: fc.tuple(method, method).map((p): (string | number)[] => [...p]) },
            { weight: 1, arbitrary: fc.constant<(string | number)[]>([]) },
          )
        : method.map((m): (string | number)[] => [m]),
      args: hostile
        ? fc.oneof(
            { weight: 10, arbitrary: fc.array(arg(planted, true), { maxLength: 3 }) },
            { weight: 1, arbitrary: fc.constant(null) },
          )
        : fc.array(arg(planted, false), { maxLength: 3 }),
    })
    .map((p): RpcLine => ({ push: p }));
  // A feed over the session: the client's callback (its export -1) gets the changes as pushes of its own.
  const watchPush = fc.option(versionId, { nil: undefined }).map(
    (since): RpcLine => ({
      push: {
        on: 0,
        path: ["watch"],
        args: [{ value: ["export", -1] }, since === undefined ? { value: {} } : { since }],
      },
    }),
  );
  const pull = fc
    .oneof(
      { weight: 1, arbitrary: fc.constantFrom<number | "last" | "each">(0, -1, 99, 2 ** 31) },
      { weight: 2, arbitrary: fc.integer({ min: 1, max: 6 }) },
    )
    .map((id): RpcLine => ({ pull: id }));
  const raw = fc
    .constantFrom(
      "",
      "not json",
      "[]",
      "{}",
      '["push"]',
      '["pull","1"]',
      '["release",0,1]',
      '["release",1,-5]',
      '["release",1,1e308]',
      '["abort",["error","Error","bye"]]',
      '["resolve",1,"x"]',
      '["reject",-1,["error","Error","x"]]',
      '["resolve",-1,["export",-2]]',
      '["pipe"]',
      '["stream",["pipeline",0,["info"],[]]]',
      '["push",["import",0]]',
      '["push",["pipeline",0]]',
      '["push",["pipeline",0,"read",[]]]',
      '["push",["pipeline",0,[{"x":1}],[]]]',
      '["push",["pipeline",0,["read"],{}]]',
      '["push",["pipeline",0,["read"],["a.txt"],5]]',
      `["push",["pipeline",0,["read"],["${"x".repeat(8 * 1024 * 1024)}"]]]`,
      Array.from({ length: 4100 }, () => '["pull",1]').join("\n"),
      Array.from({ length: 800 }, () => '["push",["pipeline",0,["stat"],["a.txt"]]]\n["pull",1]').join("\n"),
    )
    .map((line): RpcLine => ({ raw: line }));
  return fc
    .tuple(
      fc.array(
        hostile
          ? fc.oneof({ weight: 8, arbitrary: push }, { weight: 2, arbitrary: pull }, { weight: 1, arbitrary: raw })
          : fc.oneof({ weight: 9, arbitrary: push }, { weight: 1, arbitrary: watchPush }),
        { minLength: 1, maxLength: 8 },
      ),
      fc.constantFrom<"each" | "last" | "none">("each", "each", "last", "none"),
    )
    .map(([lines, pulls]) => (pulls === "none" ? lines : [...lines, { pull: pulls }]));
}

export const linesOf = (planted: readonly string[]) =>
  fc
    .boolean()
    .chain((wellFormed) =>
      fc.record({ role, wellFormed: fc.constant(wellFormed), lines: rpcLines(planted, !wellFormed) }),
    );

export const rpcKind = (transport: string) => (c: RpcCase) => {
  const first = c.lines.find((l) => "push" in l) as { push: { path: (string | number)[] } } | undefined;
  return `rpc ${transport} ${first ? first.push.path.join(".") || "<get>" : c.lines.some((l) => "raw" in l) ? "raw" : "pulls"}`;
};
