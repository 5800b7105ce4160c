import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { compareUtf8 } from "../../shared/utf8-order.ts";
import { R2Storage } from "../../storage-adapters/r2-storage.ts";
import { dirAt } from "../checked-paths.ts";
import { cap, child, errorCode, mintRoot } from "./vault.ts";

// `GET /list?depth=0` lists every file below a folder, named by its path
// relative to it, in UTF-8 byte order, paged with the same cursor as a flat
// listing; `depth=N` folds what lies deeper than N into one folder entry.

let counter = 0;
type Entry = { name: string; type: string; size?: number; etag?: string; sha256?: string | null };
type Page = { entries: Entry[]; cursor: string | null };
type Cap = ReturnType<typeof cap>;

async function pageOf(root: Cap, path: string, query: string): Promise<Page> {
  const res = await root.list(path, query);
  expect(res.status).toBe(200);
  return res.json();
}

/** Every page, following cursors; `between` runs after each page (to change the tree while paging). */
async function allPages(root: Cap, path: string, query: string, between?: (page: number) => Promise<void>) {
  const entries: Entry[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page: Page = await pageOf(root, path, `${query}${cursor ? `&cursor=${cursor}` : ""}`);
    entries.push(...page.entries);
    cursor = page.cursor;
    await between?.(++pages);
  } while (cursor !== null);
  return { entries, pages };
}

// Names whose byte order differs from segment order (`!` and `.` sort before `/`)
// and from UTF-16 order (an astral character sorts after U+FFFD in UTF-8).
const TREE = ["a!x", "a/b/c.txt", "a/b/d/e.txt", "a/b!y", "a/z.txt", "a.txt", "a0", "b/😀", "b/\uFFFD", "top.md"];

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  async function treeRoot(files: string[] = TREE) {
    const prefix = `tree/${backend}/${++counter}/`;
    const root = cap((await mintRoot(prefix, { backend })).token);
    for (const path of files) expect((await root.write(path, `bytes of ${path}`)).status).toBe(201);
    return root;
  }

  it("depth=0 lists every file below, by relative path in UTF-8 byte order, with size, etag and sha256", async () => {
    const root = await treeRoot();
    const page = await pageOf(root, "", "&depth=0");
    expect(page.cursor).toBeNull();
    expect(page.entries.map((e) => e.name)).toEqual([...TREE].sort(compareUtf8));
    expect(page.entries.every((e) => e.type === "file" && e.sha256 && e.etag && e.size)).toBe(true);
    const below = await pageOf(root, "a", "&depth=0");
    expect(below.entries.map((e) => e.name)).toEqual(["b!y", "b/c.txt", "b/d/e.txt", "z.txt"]);
  });

  it("depth=N shows each folder deeper than N once, where its files sort; depth=1 is the flat listing", async () => {
    const root = await treeRoot();
    const two = await pageOf(root, "", "&depth=2");
    expect(two.entries.map((e) => `${e.name}:${e.type}`)).toEqual(
      [
        "a!x:file",
        "a/b!y:file",
        "a/b:dir",
        "a/z.txt:file",
        "a.txt:file",
        "a0:file",
        "b/😀:file",
        "b/\uFFFD:file",
        "top.md:file",
      ].sort((x, y) =>
        compareUtf8(x.replace(":dir", "/").replace(":file", ""), y.replace(":dir", "/").replace(":file", "")),
      ),
    );
    const flat = await (await root.list("")).json();
    expect(await pageOf(root, "", "&depth=1")).toEqual(flat);
  });

  it("small pages give every entry once, in order, also when a folder's files straddle pages", async () => {
    const files = ["k/1", "k/2", "k/3", "k/4", "l", "m/n/1", "m/n/2", "m/o", "p"];
    const root = await treeRoot(files);
    for (const [depth, expected] of [
      [0, files],
      [1, ["k", "l", "m", "p"]],
      [2, ["k/1", "k/2", "k/3", "k/4", "l", "m/n", "m/o", "p"]],
    ] as const) {
      for (const limit of [1, 2, 3]) {
        const { entries } = await allPages(root, "", `&depth=${depth}&limit=${limit}`);
        expect(entries.map((e) => e.name)).toEqual(expected);
      }
    }
  });

  it("files added while paging appear at most once, and none already there is skipped or repeated", async () => {
    const files = Array.from({ length: 12 }, (_, i) => `d${i % 3}/f${String(i).padStart(2, "0")}`);
    const root = await treeRoot(files);
    const added: string[] = [];
    const { entries } = await allPages(root, "", "&depth=0&limit=4", async (page) => {
      // One before every cursor, one after.
      for (const path of [`d0/a${page}`, `d2/z${page}`]) {
        added.push(path);
        await root.write(path, "new");
      }
    });
    const names = entries.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort(compareUtf8)).toEqual(names);
    for (const path of files) expect(names).toContain(path);
    for (const name of names) expect([...files, ...added]).toContain(name);
  });

  it("refuses a bad depth or cursor, a file, and a missing folder, as the flat listing does", async () => {
    const root = await treeRoot(["a/b.txt"]);
    for (const depth of ["-1", "x", "513", "1.5", "9999"]) {
      const res = await root.list("", `&depth=${depth}`);
      expect(res.status).toBe(400);
      expect(await errorCode(res)).toBe("bad_request");
    }
    expect(await errorCode(await root.list("", "&depth=0&cursor=%2F%2F"))).toBe("bad_request");
    expect(await errorCode(await root.list("a/b.txt", "&depth=0"))).toBe("conflict");
    expect(await errorCode(await root.list("nope", "&depth=0"))).toBe("not_found");
    expect(await errorCode(await root.list("../x", "&depth=0"))).toBe("path_escapes");
  });

  it("a child cap lists only its subtree, and without read sees no etag or sha256", async () => {
    const root = await treeRoot();
    const lister = await child(root, { path: "a", rights: ["list"] });
    const page = await pageOf(lister, "", "&depth=0");
    expect(page.entries.map((e) => e.name)).toEqual(["b!y", "b/c.txt", "b/d/e.txt", "z.txt"]);
    expect(JSON.stringify(page)).not.toMatch(/etag|sha256/);
  });
});

/** The real bucket, listing at most `max` keys per call, as R2 may when each key carries metadata. */
function shortPages(max: number): R2Bucket {
  return new Proxy(env.BUCKET, {
    get(target, prop) {
      if (prop === "list")
        return (options: R2ListOptions) => target.list({ ...options, limit: Math.min(options.limit ?? max, max) });
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("R2 recursive pages over many list calls", () => {
  // 3,000 files are listed on disk (test/node/tree-walk.node.test.ts); Miniflare's R2 takes
  // ~12 ms a put, so here 600 files, with list calls of 7 keys, page as 3,000 would in calls of 35.
  it("pages cut by the call bound (often empty-handed) still give every file once, in order", async () => {
    const prefix = `tree/bulk/${++counter}/`;
    const files = Array.from({ length: 600 }, (_, i) => `n${i % 7}/m${i % 13}/${i % 5 === 0 ? "deep/" : ""}f${i}.txt`);
    for (let i = 0; i < files.length; i += 100)
      await Promise.all(files.slice(i, i + 100).map((path) => env.BUCKET.put(prefix + path, path)));
    const storage = new R2Storage(shortPages(7));
    const walk = async (depth: number, limit: number) => {
      const names: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const page = await storage.list(dirAt([prefix], ""), { after, limit, depth });
        if (!page.ok) throw new Error(page.error.code);
        names.push(...page.value.entries.map((e) => `${e.name}${e.type === "dir" ? "/" : ""}`));
        after = page.value.next;
        pages++;
      } while (after !== null);
      return { names, pages };
    };
    const all = await walk(0, 1000);
    expect(all.names).toEqual([...files].sort(compareUtf8));
    expect(all.pages).toBeGreaterThan(1);
    const folders = [...new Set(files.map((p) => `${p.split("/").slice(0, 2).join("/")}/`))].sort(compareUtf8);
    expect((await walk(2, 10)).names).toEqual(folders);
  });
});
