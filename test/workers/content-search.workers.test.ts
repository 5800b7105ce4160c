import { describe, expect, it } from "vitest";
import type { SearchPage } from "../../shared/wire-types.ts";
import { SEARCH_MAX_BYTES, SEARCH_MAX_FILE_BYTES, SEARCH_MAX_LINE_CHARS } from "../../worker/content-search.ts";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";

// `GET /search`: a regular expression (RE2) over the files below a path, one
// bounded page per request, the same on both backends.

type Cap = ReturnType<typeof cap>;
let counter = 0;

function search(root: Cap, params: Record<string, string>): Promise<Response> {
  return call("GET", `/object/${root.token}/search?${new URLSearchParams(params)}`);
}

async function page(root: Cap, params: Record<string, string>): Promise<SearchPage> {
  const res = await search(root, params);
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

/** Every page, following cursors. */
async function allPages(root: Cap, params: Record<string, string>): Promise<{ pages: SearchPage[] }> {
  const pages: SearchPage[] = [];
  let cursor: string | null = null;
  do {
    const p: SearchPage = await page(root, { ...params, ...(cursor ? { cursor } : {}) });
    pages.push(p);
    cursor = p.cursor;
    expect(pages.length).toBeLessThan(50);
  } while (cursor !== null);
  return { pages };
}

const TREE: Record<string, string> = {
  "src/app.py": "def foo():\n    return 1\n\nfoo()\n",
  "src/b.py": "x = 1\r\nFOO = 2\r\n",
  "src/deep/c.txt": "one foo\ntwo\nthree foo\nfour\nfive\nsix foo\n",
  "docs/readme.md": "\uFEFFfoo at the start\n",
  "top.txt": "nothing here\n",
};

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  async function treeRoot(files: Record<string, string | Uint8Array> = TREE) {
    const root = cap((await mintRoot(`search/${backend}/${++counter}/`, { backend })).token);
    for (const [path, body] of Object.entries(files)) expect((await root.write(path, body)).status).toBe(201);
    return root;
  }

  it("answers matching lines with line numbers, in key order; ignoreCase and a file glob", async () => {
    const root = await treeRoot();
    const found = await page(root, { pattern: "fo{2}" });
    expect(found.matches!.map((m) => `${m.path}:${m.line}:${m.text}`)).toEqual([
      "docs/readme.md:1:foo at the start",
      "src/app.py:1:def foo():",
      "src/app.py:4:foo()",
      "src/deep/c.txt:1:one foo",
      "src/deep/c.txt:3:three foo",
      "src/deep/c.txt:6:six foo",
    ]);
    expect(found.cursor).toBeNull();
    expect(found.scanned.files).toBe(5);
    const caseless = await page(root, { pattern: "^foo", ignoreCase: "true", glob: "*.py" });
    expect(caseless.matches!.map((m) => `${m.path}:${m.line}:${m.text}`)).toEqual([
      "src/app.py:4:foo()",
      "src/b.py:2:FOO = 2",
    ]);
    const byPath = await page(root, { pattern: "foo", glob: "src/**/*.txt" });
    expect(byPath.matches!.map((m) => m.line)).toEqual([1, 3, 6]);
  });

  it("shows context lines around matches once, and counts or file names in the other modes", async () => {
    const root = await treeRoot();
    const ctx = await page(root, { pattern: "foo", path: "src/deep", context: "1" });
    expect(ctx.matches!.map((m) => [m.line, m.match])).toEqual([
      [1, true],
      [2, false],
      [3, true],
      [4, false],
      [5, false],
      [6, true],
    ]);
    expect(ctx.matches![0]!.path).toBe("src/deep/c.txt");
    const counts = await page(root, { pattern: "foo", mode: "count", path: "src" });
    expect(counts).toMatchObject({
      counts: [
        { path: "src/app.py", count: 2 },
        { path: "src/deep/c.txt", count: 3 },
      ],
    });
    expect(counts.matches).toBeUndefined();
    const files = await page(root, { pattern: "foo", mode: "files" });
    expect(files.files).toEqual(["docs/readme.md", "src/app.py", "src/deep/c.txt"]);
  });

  it("pages with cursors, inside a file too, and the pages add up to the whole answer", async () => {
    const root = await treeRoot();
    const whole = (await page(root, { pattern: "foo", context: "1" })).matches!;
    const { pages } = await allPages(root, { pattern: "foo", context: "1", limit: "2" });
    // The third page fills up at c.txt's end; only the fourth finds that top.txt holds no more.
    expect(pages.map((p) => p.matches!.filter((m) => m.match).length)).toEqual([2, 2, 2, 0]);
    const matched = pages.flatMap((p) => p.matches!.filter((m) => m.match).map((m) => `${m.path}:${m.line}`));
    expect(matched).toEqual(whole.filter((m) => m.match).map((m) => `${m.path}:${m.line}`));
    const filesPaged = await allPages(root, { pattern: "foo", mode: "files", limit: "1" });
    expect(filesPaged.pages.flatMap((p) => p.files)).toEqual(["docs/readme.md", "src/app.py", "src/deep/c.txt"]);
    const forged = await search(root, { pattern: "foo", cursor: "bm90LWpzb24" });
    expect([forged.status, await errorCode(forged)]).toEqual([400, "bad_request"]);
  });

  it("a subdir cap searches only its subtree, named from its own root; the rights are read and list", async () => {
    const root = await treeRoot();
    const sub = await child(root, { path: "src/deep", rights: ["read", "list"] });
    const found = await page(sub, { pattern: "foo" });
    expect(found.matches!.map((m) => `${m.path}:${m.line}`)).toEqual(["c.txt:1", "c.txt:3", "c.txt:6"]);
    const text = JSON.stringify(await page(sub, { pattern: "foo", mode: "count" }));
    expect(text).not.toContain("search/");
    expect(text).not.toContain("src/");
    const escaping = await search(sub, { pattern: "foo", path: "../app.py" });
    expect([escaping.status, await errorCode(escaping)]).toEqual([400, "path_escapes"]);
    for (const rights of [["list"], ["read"]]) {
      const weak = await child(root, { path: "src", rights });
      const refused = await search(weak, { pattern: "foo" });
      expect([refused.status, await errorCode(refused)]).toEqual([403, "forbidden"]);
    }
  });

  it("skips oversized, binary and long-line files and says so; a hostile pattern answers", async () => {
    const root = await treeRoot({
      "big.txt": "a".repeat(SEARCH_MAX_FILE_BYTES + 1),
      "bin.dat": new Uint8Array([0x66, 0x6f, 0x6f, 0x00, 0x0a]),
      "latin1.txt": new Uint8Array([0x66, 0x6f, 0x6f, 0xe9, 0x0a]),
      "long.txt": `foo${"x".repeat(SEARCH_MAX_LINE_CHARS)}\n`,
      "redos.txt": `${"a".repeat(SEARCH_MAX_LINE_CHARS - 1)}!\n`.repeat(12),
      "z.txt": "foo\n",
    });
    const found = await page(root, { pattern: "foo" });
    expect(found.skipped).toEqual([
      { path: "big.txt", reason: "too_large" },
      { path: "bin.dat", reason: "binary" },
      { path: "latin1.txt", reason: "binary" },
      { path: "long.txt", reason: "long_line" },
    ]);
    expect(found.matches!.map((m) => m.path)).toEqual(["z.txt"]);
    // (a+)+$ backtracks exponentially in a backtracking engine; RE2 runs it in one linear pass.
    const hostile = await page(root, { pattern: "(a+)+$", glob: "redos.txt" });
    expect(hostile).toMatchObject({ matches: [], cursor: null, scanned: { files: 1 } });
  });

  it("scans at most its byte budget per request and continues with a cursor", async () => {
    // Files just under the size bound: four fit the byte budget, the fifth and sixth go on the next page.
    const chunk = `${"filler line\n".repeat(Math.floor((SEARCH_MAX_FILE_BYTES - 64) / 12))}needle\n`;
    const names = ["1.txt", "2.txt", "3.txt", "4.txt", "5.txt", "6.txt"];
    const root = await treeRoot(Object.fromEntries(names.map((n) => [n, chunk])));
    const { pages } = await allPages(root, { pattern: "needle", mode: "files" });
    expect(pages.map((p) => p.files!.length)).toEqual([4, 2]);
    for (const p of pages) expect(p.scanned.bytes).toBeLessThanOrEqual(SEARCH_MAX_BYTES);
    expect(pages.flatMap((p) => p.files)).toEqual(names);
  });

  it("refuses patterns RE2 does not take, and bad parameters, with a typed 400 before any storage", async () => {
    const root = await treeRoot({ "a.txt": "a\n" });
    const bad: Record<string, string>[] = [
      { pattern: "(a)\\1" },
      { pattern: "(?=a)" },
      { pattern: "(" },
      { pattern: "" },
      { pattern: "a".repeat(1001) },
      { pattern: "a{1000}b{1000}c{1000}" },
      { pattern: "a", mode: "json" },
      { pattern: "a", context: "11" },
      { pattern: "a", ignoreCase: "yes" },
      { pattern: "a", limit: "0" },
    ];
    for (const params of bad) {
      const res = await search(root, params);
      expect([res.status, await errorCode(res)], JSON.stringify(params).slice(0, 60)).toEqual([400, "bad_request"]);
    }
  });
});

it("works through /cap/search with the token in the Authorization header", async () => {
  const root = cap((await mintRoot(`search/header/${++counter}/`)).token);
  expect((await root.write("n.md", "hello\n")).status).toBe(201);
  const res = await call("GET", "/cap/search?pattern=hel", { headers: { authorization: `Bearer ${root.token}` } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as SearchPage).matches).toEqual([{ path: "n.md", line: 1, text: "hello", match: true }]);
});
