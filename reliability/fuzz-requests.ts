import fc from "fast-check";
import { RIGHTS } from "../shared/rights.ts";
import type { FuzzCase, TokenPick } from "./fuzz-case.ts";
import { fuzzPath, pathText } from "./fuzz-paths.ts";
import { mcpBody } from "./fuzz-tools-mcp.ts";
import { memoryBody } from "./fuzz-tools-memory.ts";

/** Tokens: the real ones by role, and every way to bend one. */
const token: fc.Arbitrary<TokenPick> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<TokenPick>("root") },
  { weight: 5, arbitrary: fc.constantFrom<TokenPick>("child", "readOnlyChild") },
  { weight: 2, arbitrary: fc.constantFrom<TokenPick>("revoked", "unknown") },
  {
    weight: 2,
    arbitrary: fc.constantFrom<TokenPick>(
      ...(["upper", "suffix", "prefix", "truncate", "percent", "dotdot", "slash"] as const).map((mangle) => ({
        mangle,
      })),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          "",
          "%00",
          "..",
          "%2e%2e",
          "a".repeat(32),
          "a".repeat(10_000),
          "0".repeat(32),
          "%F0%9F%98%80",
          "null",
          "undefined",
          "__proto__",
        ),
        fc.string({ maxLength: 40 }).map(encodeURIComponent),
      )
      .map((literal): TokenPick => ({ literal })),
  },
);

const rangeHeader = fc.oneof(
  fc.constantFrom(
    "bytes=0-3",
    "bytes=-3",
    "bytes=5-",
    "bytes=0-0",
    "bytes=9-2",
    "bytes=-0",
    "bytes=999999999999999999999-",
    "bytes=-99999999999999999999",
  ),
  fc.constantFrom(
    "bytes=0-1,3-4",
    "bytes=",
    "bytes=a-b",
    "items=0-1",
    "bytes=--1",
    "bytes= 0-1",
    "bytes=0-1;x",
    `bytes=${"0-1,".repeat(2000)}0-1`,
  ),
  fc.tuple(fc.integer({ min: -5, max: 40 }), fc.integer({ min: -5, max: 40 })).map(([a, b]) => `bytes=${a}-${b}`),
);
const etagHeader = fc.oneof(
  fc.constantFrom(
    "*",
    '"x"',
    "x",
    'W/"x"',
    '"',
    '""',
    '"a", "b"',
    `${'"e",'.repeat(3000)}"e"`,
    "\u00ff",
    "* , *",
    "W/*",
  ),
  fc.string({ unit: "grapheme-ascii", maxLength: 40 }),
);
const contentType = fc.constantFrom(
  "text/plain",
  "application/json",
  "",
  "x",
  "text/html; charset=utf-8",
  `a/b; p="${"q".repeat(5000)}"`,
  "multipart/form-data; boundary=--",
  "\u00e9/\u00e9",
);

const headers = fc.record(
  {
    range: rangeHeader,
    "if-match": etagHeader,
    "if-none-match": etagHeader,
    "content-type": contentType,
    "if-modified-since": fc.constantFrom("Thu, 01 Jan 1970 00:00:00 GMT", "garbage", "Fri, 31 Dec 9999 23:59:59 GMT"),
    authorization: fc.constantFrom("Bearer ", "Bearer x", "Basic Zm9vOmJhcg==", `Bearer ${"a".repeat(9000)}`),
    "x-forwarded-host": fc.constantFrom("evil.example", "localhost:1"),
  },
  { requiredKeys: [] },
);

const extraQuery = fc.oneof(
  { weight: 6, arbitrary: fc.constant("") },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      "&limit=1",
      "&limit=0",
      "&limit=1001",
      "&limit=-1",
      "&limit=1e3",
      "&limit=%00",
      "&cursor=",
      "&cursor=%2e%2e",
      "&cursor=AAAA",
      "&cursor=../x",
      "&path=b",
      "&path",
      "&x=1",
      "&limit=1&limit=2",
      `&cursor=${"A".repeat(20_000)}`,
      "&%70ath=x",
      "&PATH=x",
      // GET /search, GET /lines, DELETE /folder (issue 24's routes)
      "&pattern=x",
      "&pattern=(a%2B)%2B%24",
      "&pattern=",
      "&pattern=%5C",
      "&pattern=x&mode=files&context=11",
      "&pattern=x&glob=**%2F*",
      "&offset=0",
      "&offset=1&limit=2000",
      "&recursive=true",
      "&recursive=yes",
    ),
  },
);

const queryRoute = fc.constantFrom(
  "/file",
  "/file",
  "/file",
  "/stat",
  "/list",
  "/audit",
  "/lines",
  "/search",
  "/folder",
);
const jsonBodyText = (fields: fc.Arbitrary<Record<string, unknown>>) =>
  fc.oneof(
    { weight: 8, arbitrary: fields.map((value) => JSON.stringify(value)) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        fc.constantFrom(
          "",
          "{",
          "[]",
          "null",
          "1e999",
          '"x"',
          '{"__proto__":{"x":1}}',
          '{"path":"a","path":"../b"}',
          "\u0000",
          "{}".padEnd(70_000, " "),
        ),
        fc.constantFrom(10_000, 3_000).map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
        fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? "null"),
      ),
    },
  );

export function fuzzCase(planted: readonly string[]): fc.Arbitrary<FuzzCase> {
  const path = fuzzPath(planted);
  const anyText = pathText(planted);
  const base = { token, headers, target: fc.constant("object" as const) };

  const pathRequest = fc
    .record({
      ...base,
      route: queryRoute,
      method: fc.constantFrom("GET", "GET", "HEAD", "DELETE"),
      path,
      extra: extraQuery,
      noPath: fc.boolean(),
    })
    .map(
      ({ path: p, extra, noPath, ...rest }): FuzzCase => ({
        ...rest,
        kind: `${rest.method} ${rest.route}`,
        query: noPath && extra ? extra.slice(1) : `path=${p.query}${extra}`,
      }),
    );

  const write = fc
    .record({
      ...base,
      path,
      body: fc.oneof(fc.constantFrom("", "new content\n", "x".repeat(70_000)), fc.uint8Array({ maxLength: 64 })),
    })
    .map(
      ({ path: p, ...rest }): FuzzCase => ({
        ...rest,
        kind: "PUT /file",
        method: "PUT",
        route: "/file",
        query: `path=${p.query}`,
      }),
    );

  // Content-Length that lies: shorter than the body, longer (then EOF), duplicated, or not a number.
  const lying = fc
    .record({ token, path, sent: fc.constantFrom(0, 5, 100), lie: fc.constantFrom(-3, 1, 50, 1 << 20, 2 ** 40) })
    .map(
      ({ token: t, path: p, sent, lie }): FuzzCase => ({
        kind: "PUT /file lying Content-Length",
        method: "PUT",
        token: t,
        target: "object",
        route: "/file",
        query: `path=${p.query}`,
        headers: {},
        body: "L".repeat(sent),
        declaredLength: Math.max(0, sent + lie),
      }),
    );

  const move = fc
    .record({ ...base, from: anyText, to: anyText, overwrite: fc.constantFrom(undefined, true, false, "yes") })
    .chain(({ from, to, overwrite, ...rest }) =>
      jsonBodyText(fc.constant({ from, to, ...(overwrite === undefined ? {} : { overwrite }) })).map(
        (body): FuzzCase => ({ ...rest, kind: "POST /move", method: "POST", route: "/move", query: "", body }),
      ),
    );

  const subdirFields = fc.record(
    {
      path: anyText,
      rights: fc.oneof(fc.subarray([...RIGHTS]), fc.constantFrom(["admin"], ["read", "read"], "read", [], null)),
      ttlSeconds: fc.constantFrom(1, 3600, 0, -1, 1.5, 1e308, "60", null),
      label: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("\u202e", "a\nb", "x".repeat(300), null)),
      extra: fc.constant(1),
    },
    { requiredKeys: ["path"] },
  );
  const subdir = fc
    .record({ ...base, body: jsonBodyText(subdirFields) })
    .map((rest): FuzzCase => ({ ...rest, kind: "POST /subdir", method: "POST", route: "/subdir", query: "" }));

  const capRoutes = fc
    .record({
      ...base,
      route: fc.constantFrom(
        "",
        "",
        "/children",
        "/children/0123456789abcdef0123",
        "/children/..",
        "/children/%2e%2e",
        "/nope",
        "/file/x",
        "//file",
      ),
      method: fc.constantFrom("GET", "DELETE", "POST", "PATCH", "OPTIONS"),
    })
    .map((rest): FuzzCase => ({ ...rest, kind: `${rest.method} /object${rest.route || "/<token>"}`, query: "" }));

  const admin = fc
    .record({
      headers,
      route: fc.constantFrom(
        "/admin/roots",
        "/admin/roots/x",
        "/admin/",
        "/",
        "/object",
        "/object/",
        "/%2e%2e/admin/roots",
      ),
      method: fc.constantFrom("GET", "POST", "DELETE"),
    })
    .chain((rest) =>
      jsonBodyText(fc.record({ backend: fc.constantFrom("r2", "disk", "s3"), prefix: anyText })).map(
        (body): FuzzCase => ({
          ...rest,
          kind: `${rest.method} ${rest.route}`,
          target: rest.route.startsWith("/admin") ? "admin" : "top",
          token: "root",
          query: "",
          ...(rest.method === "POST" ? { body } : {}),
        }),
      ),
    );

  const mcp = fc.record({ ...base, body: mcpBody(anyText) }).map(
    (rest): FuzzCase => ({
      ...rest,
      kind: "POST /mcp",
      method: "POST",
      route: "/mcp",
      query: "",
      toolRoute: "mcp",
      headers: { ...rest.headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
    }),
  );

  const memory = fc.record({ ...base, body: memoryBody(anyText) }).map(
    (rest): FuzzCase => ({
      ...rest,
      kind: "POST /memory",
      method: "POST",
      route: "/memory",
      query: "",
      toolRoute: "memory",
    }),
  );

  return fc.oneof(
    { weight: 14, arbitrary: pathRequest },
    { weight: 6, arbitrary: write },
    { weight: 2, arbitrary: lying },
    { weight: 3, arbitrary: move },
    { weight: 3, arbitrary: subdir },
    { weight: 2, arbitrary: capRoutes },
    { weight: 1, arbitrary: admin },
    { weight: 5, arbitrary: mcp },
    { weight: 5, arbitrary: memory },
  );
}
