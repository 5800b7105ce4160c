/**
 * Deep paths on the disk backend. A key may be up to 1,024 bytes, so a write
 * can need hundreds of new folders; R2 takes such a write, so the disk must
 * too. A refused write must leave no hidden empty folders behind, and `stat`
 * and `write` must agree about a name whatever empty folders sit there.
 */

import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_TREE_DEPTH } from "../../disk-host/dir-visibility.ts";
import type { Root } from "../../storage-adapters/storage-adapter.ts";
import { entryAt, fileAt, rootAt } from "../checked-paths.ts";
import { bodyOf, expectCode, expectOk, fixtureEach, getText, listTree, md5, put, sha256 } from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
const fx = fixtureEach(ROOT);

/** `depth` one-letter folders, then `f`: 2 * depth + 1 bytes, well inside the key limit. */
const deep = (depth: number, letter = "d") => `${`${letter}/`.repeat(depth)}f`;

/** Every name under the cap's folder. */
const tree = () => listTree(join(fx.base, "r"));

describe("a write that needs many new folders", () => {
  it("makes all 400 of them; the delete of its file keeps them, and removing them, innermost first, removes them all", async () => {
    const path = deep(400);
    expect(expectOk(await put(fx.storage, ROOT, path, "deep"))).toEqual({
      created: true,
      size: 4,
      etag: md5("deep"),
      sha256: sha256("deep"),
      // No version blob was asked for.
      kept: false,
    });
    expect(expectOk(await getText(fx.storage, ROOT, path))).toBe("deep");
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "d/d/d")))).toEqual({ type: "dir" });
    expect((await tree()).length).toBe(401);
    expectOk(await fx.storage.remove(fileAt(ROOT, path)));
    // The 400 folders and the innermost one's marker.
    expect((await tree()).length).toBe(401);
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "d/d/d")))).toEqual({ type: "dir" });
    expectCode(await fx.storage.removeDir(rootAt(["r/", "d/"])), "conflict");
    for (let depth = 400; depth > 0; depth--) expectOk(await fx.storage.removeDir(rootAt(["r/", "d/".repeat(depth)])));
    // Only the cap's root is left, kept by its own marker as R2 keeps `r/`.
    expect(await tree()).toEqual([".capvault-folder"]);
  });

  it.each([
    ["a failed If-Match", { ifMatch: '"0123"' }, "precondition_failed", 4],
    ["a body shorter than declared", {}, "bad_request", 9],
  ])("refused for %s, it leaves no folder behind", async (_case, preconditions, code, length) => {
    for (const letter of ["a", "b", "c"]) {
      const result = await fx.storage.write(fileAt(ROOT, deep(300, letter)), bodyOf("deep"), {
        length,
        contentType: "text/plain",
        ...preconditions,
      });
      expectCode(result, code);
    }
    expect(await tree()).toEqual([]);
  });
});

describe("concurrent writes into new folders", () => {
  it("all succeed, though each may find its folders made, or pruned, by another", async () => {
    for (let round = 0; round < 5; round++) {
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) =>
          put(fx.storage, ROOT, `${deep(20, `r${round}`)}/${i}`, "x", { ifMatch: i % 4 === 0 ? '"nope"' : undefined }),
        ),
      );
      expect(results.map((r) => (r.ok ? "ok" : r.error.code))).toEqual(
        Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? "precondition_failed" : "ok")),
      );
    }
  });
});

describe("stat and write agree about a name", () => {
  it("a name holding only a deep empty tree is missing to stat and free for a write", async () => {
    await mkdir(join(fx.base, "r", "x", ...Array(150).fill("e")), { recursive: true });
    expectCode(await fx.storage.stat(entryAt(ROOT, "x")), "not_found");
    expect(expectOk(await put(fx.storage, ROOT, "x", "file now")).created).toBe(true);
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "x")))).toMatchObject({ type: "file", size: 8 });
  });

  it("a name holding an empty tree too deep to look at is a folder to both", async () => {
    await mkdir(join(fx.base, "r", "x", ...Array(MAX_TREE_DEPTH + 2).fill("e")), { recursive: true });
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "x")))).toEqual({ type: "dir" });
    expectCode(await put(fx.storage, ROOT, "x", "file now"), "conflict");
  });
});
