/**
 * Containment with real symlinks: links inside a cap's root are followed,
 * links that resolve anywhere else are `outside_root` for every operation,
 * and nothing outside is read, created or changed. Child caps (root levels)
 * get no more than their parent reached.
 */

import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Result } from "../../shared/result.ts";
import type { Root } from "../../storage-adapters/storage-adapter.ts";
import { dirAt, entryAt, fileAt, rootAt } from "../checked-paths.ts";
import {
  atimeRecordsReads,
  bodyOf,
  closeChecked,
  type DiskFixture,
  expectCode,
  expectOk,
  getText,
  makeFixture,
  md5,
  put,
  SECRET,
  watchTree,
} from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
let fx: DiskFixture;
let watches: { assertUntouched(): Promise<void> }[];

/** Links in the cap root `r/` that lead to a file anywhere but inside `r/`. */
const OUTSIDE_FILE_LINKS = [
  "file-abs",
  "file-rel",
  "dangling",
  "dangling-abs",
  "via-dotdot",
  "up-and-back",
  "loop-a",
  "self",
  "to-sibling",
  "abs-sibling",
  "long-chain",
] as const;
const OUTSIDE_DIR_LINKS = ["dir-abs", "dir-rel", "dir-sibling"] as const;

beforeEach(async () => {
  fx = await makeFixture();
  const r = join(fx.base, "r");
  await mkdir(join(r, "realdir"), { recursive: true });
  await mkdir(join(r, "sub"));
  await mkdir(join(fx.base, "sibling"));
  await writeFile(join(r, "real.txt"), "inside");
  await writeFile(join(r, "realdir", "f.txt"), "in dir");
  await writeFile(join(r, "sub", "keep.txt"), "keep");
  await writeFile(join(fx.base, "sibling", "secret2.txt"), SECRET);
  const links: Record<string, string> = {
    // inside: followed
    "in-file": "real.txt",
    "in-abs": join(r, "real.txt"),
    "in-dir": "realdir",
    "in-dotdot": "realdir/../real.txt",
    "in-chain": "in-file",
    // outside, each in its own way
    "file-abs": join(fx.outside, "secret.txt"),
    "file-rel": "../../outside/secret.txt",
    dangling: "nowhere.txt",
    "dangling-abs": join(r, "nowhere.txt"),
    "via-dotdot": "sub/../../../outside/secret.txt",
    "up-and-back": "../r/real.txt",
    "loop-a": "loop-b",
    "loop-b": "loop-a",
    self: "self",
    "to-sibling": "../sibling/secret2.txt",
    "abs-sibling": join(fx.base, "sibling", "secret2.txt"),
    "dir-abs": join(fx.outside, "dir"),
    "dir-rel": "../../outside/dir",
    "dir-sibling": "../sibling",
  };
  // 41 links in a chain: one expansion over the limit, even though it ends inside.
  for (let i = 0; i < 41; i++) links[`chain-${i}`] = i === 40 ? "real.txt" : `chain-${i + 1}`;
  links["long-chain"] = "chain-0";
  for (const [name, target] of Object.entries(links)) await symlink(target, join(r, name));
  watches = [await watchTree(fx.outside), await watchTree(join(fx.base, "sibling"))];
});

afterEach(async () => {
  try {
    for (const watch of watches) await watch.assertUntouched();
  } finally {
    await closeChecked(fx);
  }
});

/** Every operation that names `path` as a file, and what each answered. */
async function fileOps(root: Root, path: string): Promise<Record<string, string>> {
  const code = (result: Result<unknown>) => (result.ok ? "ok" : result.error.code);
  const write = () => fx.storage.write(fileAt(root, path), bodyOf("EVIL"), { length: 4, contentType: "text/plain" });
  const read = await fx.storage.read(fileAt(root, path), {});
  if (read.ok && read.value.status === "body") {
    expect(await new Response(read.value.body).text()).not.toContain(SECRET);
  }
  // A source that exists in this cap, so moving onto `path` is judged by `path` alone.
  const source = await put(fx.storage, root, "move-source.txt", "m");
  return {
    read: code(read),
    readRange: code(await fx.storage.read(fileAt(root, path), { range: "bytes=0-3" })),
    stat: code(await fx.storage.stat(entryAt(root, path))),
    list: code(await fx.storage.list(dirAt(root, path), { after: null, limit: 10 })),
    write: code(await write()),
    writeIfNoneMatch: code(
      await fx.storage.write(fileAt(root, path), bodyOf("EVIL"), { length: 4, contentType: "x/y", ifNoneMatch: "*" }),
    ),
    remove: code(await fx.storage.remove(fileAt(root, path))),
    moveFrom: code(await fx.storage.move(fileAt(root, path), fileAt(root, "moved-here"), true)),
    moveOnto: source.ok
      ? code(await fx.storage.move(fileAt(root, "move-source.txt"), fileAt(root, path), true))
      : code(source),
  };
}

const allOutside = (ops: Record<string, string>) =>
  Object.fromEntries(Object.keys(ops).map((op) => [op, "outside_root"]));

describe("links inside the root are followed", () => {
  it("for read, stat, list and write; remove and move act on the link itself, like rm and mv", async () => {
    for (const link of ["in-file", "in-abs", "in-dotdot", "in-chain"]) {
      expect(expectOk(await getText(fx.storage, ROOT, link))).toBe("inside");
      expect(expectOk(await fx.storage.stat(entryAt(ROOT, link)))).toMatchObject({ type: "file", etag: md5("inside") });
    }
    expect(expectOk(await getText(fx.storage, ROOT, "in-dir/f.txt"))).toBe("in dir");
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "in-dir")))).toEqual({ type: "dir" });
    expect(
      expectOk(await fx.storage.list(dirAt(ROOT, "in-dir"), { after: null, limit: 10 })).entries.map((e) => e.name),
    ).toEqual(["f.txt"]);

    const listed = expectOk(await fx.storage.list(dirAt(ROOT, ""), { after: null, limit: 1000 })).entries;
    expect(listed.map((e) => e.name).filter((n) => !n.startsWith("chain-"))).toEqual([
      "in-abs",
      "in-chain",
      "in-dir",
      "in-dotdot",
      "in-file",
      "real.txt",
      "realdir",
      "sub",
    ]);
    expect(listed.find((e) => e.name === "in-file")).toMatchObject({ type: "file", etag: md5("inside"), size: 6 });
    expect(listed.find((e) => e.name === "in-dir")).toEqual({ name: "in-dir", type: "dir" });

    expectOk(await put(fx.storage, ROOT, "in-file", "rewritten through the link"));
    expect(await readFile(join(fx.base, "r/real.txt"), "utf8")).toBe("rewritten through the link");
    expect((await lstat(join(fx.base, "r/in-file"))).isSymbolicLink()).toBe(true);
    expectOk(await put(fx.storage, ROOT, "in-dir/new.txt", "new"));
    expect(await readFile(join(fx.base, "r/realdir/new.txt"), "utf8")).toBe("new");

    expectOk(await fx.storage.remove(fileAt(ROOT, "in-chain")));
    await expect(lstat(join(fx.base, "r/in-chain"))).rejects.toThrow();
    expect(await readFile(join(fx.base, "r/real.txt"), "utf8")).toBe("rewritten through the link");
    expectOk(await fx.storage.move(fileAt(ROOT, "in-abs"), fileAt(ROOT, "sub/moved-link"), false));
    expect(await readlink(join(fx.base, "r/sub/moved-link"))).toBe(join(fx.base, "r/real.txt"));
  });
});

describe("links that resolve outside the root", () => {
  it.each(OUTSIDE_FILE_LINKS)("%s: every file operation is outside_root and the link stays", async (link) => {
    const ops = await fileOps(ROOT, link);
    expect(ops).toEqual(allOutside(ops));
    expect((await lstat(join(fx.base, "r", link))).isSymbolicLink()).toBe(true);
    expect(await fx.storage.prepareRoot(rootAt(["r/", `${link}/`]), { create: false })).toEqual({
      ok: false,
      error: { code: "outside_root", message: "resolved outside root" },
    });
    // As a single level the boundary is the base folder: these two lead to a file in it.
    const levelZeroReaches = link === "to-sibling" || link === "abs-sibling" || link === "up-and-back";
    expectCode(
      await fx.storage.prepareRoot(rootAt([`r/${link}/`]), { create: true }),
      levelZeroReaches ? "conflict" : "outside_root",
    );
  });

  it.each(OUTSIDE_DIR_LINKS)(
    "%s/: every operation beneath it is outside_root, nothing is created there",
    async (link) => {
      for (const path of [`${link}/inner.txt`, `${link}/secret2.txt`, `${link}/new.txt`, `${link}/sub/new.txt`]) {
        const ops = await fileOps(ROOT, path);
        expect(ops).toEqual(allOutside(ops));
      }
      expectCode(await fx.storage.stat(entryAt(ROOT, link)), "outside_root");
      expectCode(await fx.storage.list(dirAt(ROOT, link), { after: null, limit: 10 }), "outside_root");
      expectCode(await fx.storage.list(dirAt(ROOT, link), { after: "a", limit: 10 }), "outside_root");
      // As one level `r/dir-sibling/` is beneath the base folder, which a root cap there may reach.
      const roots: Root[] = [
        ["r/", `${link}/`],
        ["r/", `${link}/`, "sub/"],
        ...(link === "dir-sibling" ? [] : [[`r/${link}/`]]),
      ];
      for (const root of roots) {
        expectCode(await fx.storage.prepareRoot(rootAt(root), { create: true }), "outside_root");
        expectCode(await fx.storage.list(dirAt(root, ""), { after: null, limit: 10 }), "outside_root");
        expectCode(await fx.storage.stat(entryAt(root, "")), "outside_root");
        expectCode(await put(fx.storage, root, "planted.txt", "EVIL"), "outside_root");
      }
    },
  );

  it("are never listed, and a root listing reads nothing outside", async () => {
    const names = expectOk(await fx.storage.list(dirAt(ROOT, ""), { after: null, limit: 1000 })).entries.map(
      (e) => e.name,
    );
    for (const link of [...OUTSIDE_FILE_LINKS, ...OUTSIDE_DIR_LINKS, "loop-b"]) expect(names).not.toContain(link);
  });

  it("the filesystem records reads in atime, so the untouched checks also prove nothing was read", async () => {
    expect(await atimeRecordsReads(fx.top)).toBe(true);
  });
});

describe("refusals of a streamed body", () => {
  it("read the whole body before answering (Miniflare's loopback drops the connection otherwise)", async () => {
    const total = 1024 * 1024;
    const counted = () => {
      const state = { pulled: 0, body: null as unknown as ReadableStream<Uint8Array> };
      state.body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (state.pulled >= total) return controller.close();
          state.pulled += 65_536;
          controller.enqueue(new Uint8Array(65_536));
        },
      });
      return state;
    };
    expectOk(await put(fx.storage, ROOT, "exists.txt", "x"));
    const cases: [string, Root, string, object][] = [
      ["outside_root", ROOT, "dir-abs/big.bin", {}],
      ["precondition_failed", ROOT, "exists.txt", { ifNoneMatch: "*" }],
      ["conflict", ROOT, "realdir", {}],
      ["bad_request", ROOT, "short.bin", { length: 10 }],
    ];
    for (const [expected, root, path, extra] of cases) {
      const body = counted();
      const result = await fx.storage.write(fileAt(root, path), body.body, {
        length: total,
        contentType: "x/y",
        ...extra,
      });
      expectCode(result, expected);
      expect(body.pulled).toBe(total);
    }
  });
});

describe("reserved names", () => {
  it("temps and sidecars cannot be reached through a link either", async () => {
    const root: Root = [""];
    expectOk(await put(fx.storage, ROOT, "typed.txt", "typed", { contentType: "text/x-typed" }));
    const [sidecar] = await readdir(join(fx.base, ".capvault-meta"));
    await writeFile(join(fx.base, "r/.capvault-tmp-abc"), "partial");
    await symlink(`.capvault-meta/${sidecar}`, join(fx.base, "to-sidecar"));
    await symlink(".capvault-meta", join(fx.base, "to-meta"));
    await symlink("r/.capvault-tmp-abc", join(fx.base, "to-temp"));
    for (const path of ["to-sidecar", "to-temp", `to-meta/${sidecar}`]) {
      const ops = await fileOps(root, path);
      expect(ops).toEqual(allOutside(ops));
    }
    expectCode(await fx.storage.list(dirAt(root, "to-meta"), { after: null, limit: 10 }), "outside_root");
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "typed.txt")))).toMatchObject({ contentType: "text/x-typed" });
  });
});

describe("child caps (root levels)", () => {
  beforeEach(async () => {
    const parent = join(fx.base, "parent");
    await mkdir(join(parent, "peer"), { recursive: true });
    await mkdir(join(parent, "child"));
    await writeFile(join(parent, "peer", "file.txt"), "peer");
    await writeFile(join(parent, "child", "own.txt"), "own");
    await symlink("../peer/file.txt", join(parent, "child", "peer-link"));
    await symlink(join(parent, "peer", "file.txt"), join(parent, "child", "peer-abs"));
    await symlink("../peer", join(parent, "child", "peer-dir"));
    await symlink("child", join(parent, "child-link"));
    await symlink(join(parent, "child"), join(parent, "child-abs"));
    await symlink("../sibling", join(parent, "out-link"));
    await symlink(join(fx.outside, "dir"), join(parent, "abs-out"));
    await symlink("parent", join(fx.base, "parent-link"));
  });

  it("a level-1 link into a sibling of level 1: level 0 reaches it, level 1 does not", async () => {
    const parentCap: Root = ["parent/"];
    const childCap: Root = ["parent/", "child/"];
    expect(expectOk(await getText(fx.storage, parentCap, "child/peer-link"))).toBe("peer");
    expect(expectOk(await getText(fx.storage, parentCap, "child/peer-abs"))).toBe("peer");
    expect(expectOk(await getText(fx.storage, parentCap, "child/peer-dir/file.txt"))).toBe("peer");
    expect(expectOk(await getText(fx.storage, childCap, "own.txt"))).toBe("own");
    watches.push(await watchTree(join(fx.base, "parent", "peer")));
    for (const path of ["peer-link", "peer-abs", "peer-dir/file.txt", "peer-dir/new.txt"]) {
      const ops = await fileOps(childCap, path);
      expect(ops).toEqual(allOutside(ops));
    }
    expectCode(await fx.storage.list(dirAt(childCap, "peer-dir"), { after: null, limit: 10 }), "outside_root");
    expect(
      expectOk(await fx.storage.list(dirAt(childCap, ""), { after: null, limit: 10 })).entries.map((e) => e.name),
    ).toEqual(["move-source.txt", "own.txt"]);
  });

  it("a child root through a link that stays in the parent works, and is bounded by its real folder", async () => {
    for (const childCap of [
      ["parent/", "child-link/"],
      ["parent/", "child-abs/"],
      ["parent-link/", "child/"],
    ] as Root[]) {
      expectOk(await fx.storage.prepareRoot(rootAt(childCap), { create: false }));
      expect(expectOk(await getText(fx.storage, childCap, "own.txt"))).toBe("own");
      expectCode(await fx.storage.read(fileAt(childCap, "peer-link"), {}), "outside_root");
    }
    expectOk(await put(fx.storage, ["parent/", "child-link/"], "written.txt", "via link"));
    expect(await readFile(join(fx.base, "parent/child/written.txt"), "utf8")).toBe("via link");
  });

  it("a child root through a link leading out of the parent is outside_root for everything", async () => {
    for (const childCap of [
      ["parent/", "out-link/"],
      ["parent/", "abs-out/"],
      ["parent/", "child/", "peer-dir/"],
    ] as Root[]) {
      expect(await fx.storage.prepareRoot(rootAt(childCap), { create: false })).toEqual({
        ok: false,
        error: { code: "outside_root", message: "resolved outside root" },
      });
      expectCode(await fx.storage.prepareRoot(rootAt(childCap), { create: true }), "outside_root");
      expectCode(await fx.storage.stat(entryAt(childCap, "")), "outside_root");
      expectCode(await fx.storage.list(dirAt(childCap, ""), { after: null, limit: 10 }), "outside_root");
      const ops = await fileOps(childCap, "secret2.txt");
      expect(ops).toEqual(allOutside(ops));
    }
  });
});
