/**
 * Recursive listing on real folders: the disk host's bounded depth-first walk,
 * driven through DiskStorage and the wire protocol as under Miniflare.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { compareUtf8 } from "../../shared/utf8-order.ts";
import type { Root, StorageListPage } from "../../storage-adapters/storage-adapter.ts";
import { dirAt, rootAt } from "../checked-paths.ts";
import { closeChecked, type DiskFixture, expectOk, makeFixture, put, sha256 } from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
/**
 * The walk's bounds, small: the same code meets them after hundreds of files
 * and folders rather than the vault's thousands (made by hand, they cost a
 * loaded CI machine a minute).
 */
const FILES_BUDGET = 400;
const FOLDER_BUDGET = 300;
let fx: DiskFixture;

beforeEach(async () => {
  fx = await makeFixture({ walkBudget: { files: FILES_BUDGET, folders: FOLDER_BUDGET } });
  expectOk(await fx.storage.prepareRoot(rootAt(ROOT), { create: true }));
});

afterEach(() => closeChecked(fx));

/** Places files by hand, in parallel: this is about listing, not writing. */
async function place(files: string[]): Promise<void> {
  for (let i = 0; i < files.length; i += 200) {
    await Promise.all(
      files.slice(i, i + 200).map(async (path) => {
        await mkdir(dirname(join(fx.base, "r", path)), { recursive: true });
        await writeFile(join(fx.base, "r", path), path);
      }),
    );
  }
}

/** Empty folders made by hand (the vault never leaves one), in parallel. */
async function emptyFolders(paths: string[]): Promise<void> {
  for (let i = 0; i < paths.length; i += 200)
    await Promise.all(paths.slice(i, i + 200).map((path) => mkdir(join(fx.base, "r", path), { recursive: true })));
}

/** Every page of a listing; folders end in `/`. A cursor given twice fails it, as it would loop a client. */
async function walkAll(path: string, depth: number, limit: number) {
  const names: string[] = [];
  const sizes: number[] = [];
  const cursors = new Set<string>();
  let after: string | null = null;
  do {
    const page: StorageListPage = expectOk(await fx.storage.list(dirAt(ROOT, path), { after, limit, depth }));
    names.push(...page.entries.map((e) => `${e.name}${e.type === "dir" ? "/" : ""}`));
    sizes.push(page.entries.length);
    after = page.next;
    if (after !== null && cursors.has(after)) throw new Error(`cursor repeated: ${after}`);
    if (after !== null) cursors.add(after);
  } while (after !== null);
  return { names, sizes };
}

describe("recursive listing on disk", () => {
  it("1,000 files in nested folders: depth=0 gives every file once, in UTF-8 order; depth=2 each folder once", async () => {
    const files = Array.from({ length: 1000 }, (_, i) => `n${i % 7}/m${i % 13}/${i % 5 === 0 ? "deep/" : ""}f${i}.txt`);
    // Names whose byte order is not segment order: `!` and `.` sort before `/`.
    files.push("n1!x", "n1.txt", "n1/m1!y", "😀/a", "\uFFFD/b");
    await place(files);
    const all = await walkAll("", 0, 250);
    expect(all.names).toEqual([...files].sort(compareUtf8));
    expect(all.sizes).toEqual([250, 250, 250, 250, 5]);

    const folders = files.map((p) => {
      const parts = p.split("/");
      return parts.length > 2 ? `${parts.slice(0, 2).join("/")}/` : p;
    });
    expect((await walkAll("", 2, 7)).names).toEqual([...new Set(folders)].sort(compareUtf8));
  });

  it("a folder of more files than one page may walk is shown once; the page that hits the bound ends early", async () => {
    const files = Array.from({ length: FILES_BUDGET + 300 }, (_, i) => `big/sub/f${i}`);
    files.push("after.txt", "big!", "big/sub!", "big/z");
    await place(files);
    const folded = await walkAll("", 2, 1000);
    expect(folded.names).toEqual(["after.txt", "big!", "big/sub!", "big/sub/", "big/z"]);
    // The first page walked its bound of files, all inside `big/sub`, and stopped there.
    expect(folded.sizes).toEqual([4, 1]);
    const every = await walkAll("", 0, 1000);
    expect(every.names).toEqual([...files].sort(compareUtf8));
  });

  it("hundreds of empty folders, past the folder budget, before, between and after files: every page makes progress, none ends early", async () => {
    const many = (prefix: string, nested: string) =>
      Array.from({ length: FOLDER_BUDGET + 300 }, (_, i) => `q/${prefix}/e${String(i).padStart(4, "0")}${nested}`);
    // `!` sorts first: the first page meets only empty folders.
    await emptyFolders([...many("!", ""), ...many("a", "/x"), ...many("c", ""), ...many("d", "/x")]);
    const files = ["q/0.txt", "q/a/0.txt", "q/a/z.txt", "q/b.txt", "q/d/z.txt"];
    await place(files);
    expect((await walkAll("", 0, 1000)).names).toEqual(files);
    expect((await walkAll("", 3, 1000)).names).toEqual(files);
    // Folded: `q/a` was shown before its empty folders, `q/d` only after them; each is shown once.
    const folded = ["q/0.txt", "q/a/", "q/b.txt", "q/d/"];
    expect((await walkAll("", 2, 1000)).names).toEqual(folded);
    expect((await walkAll("", 2, 1)).names).toEqual(folded);
  });

  it("files written through the vault carry their sha256; links are not followed", async () => {
    expectOk(await put(fx.storage, ROOT, "notes/a.md", "alpha"));
    await mkdir(join(fx.base, "r", "real"), { recursive: true });
    await writeFile(join(fx.base, "r", "real", "x.txt"), "x");
    await symlink(join(fx.base, "r", "real"), join(fx.base, "r", "loop"));
    await symlink(join(fx.base, "r"), join(fx.base, "r", "real", "up"));
    await symlink(join(fx.outside, "secret.txt"), join(fx.base, "r", "secret.txt"));
    const page = expectOk(await fx.storage.list(dirAt(ROOT, ""), { after: null, limit: 100, depth: 0 }));
    expect(page.entries.map((e) => e.name)).toEqual(["notes/a.md", "real/x.txt"]);
    expect(page.entries[0]).toMatchObject({ sha256: sha256("alpha"), size: 5 });
    expect(page.entries[1]).toMatchObject({ sha256: sha256("x") });
  });
});
