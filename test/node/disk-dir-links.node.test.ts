/**
 * Links to folders inside the root, on the storage API: remove and move act
 * on the link itself, as `rm` and `mv` do, and never on the folder's files.
 * (Read, write, stat and list follow them: disk-containment.node.test.ts.)
 */

import { lstat, mkdir, readdir, readlink, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Root } from "../../storage-adapters/storage-adapter.ts";
import { entryAt, fileAt, rootAt } from "../checked-paths.ts";
import { type DiskFixture, expectCode, expectOk, makeFixture, put } from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
let fx: DiskFixture;
const at = (...parts: string[]) => join(fx.base, "r", ...parts);

beforeEach(async () => {
  fx = await makeFixture();
  expectOk(await fx.storage.prepareRoot(rootAt(ROOT), { create: true }));
  await mkdir(at("keep"));
  await writeFile(at("keep", "a.md"), "a");
  await symlink("keep", at("to-keep"));
  await mkdir(at("empty"));
  await symlink("empty", at("to-empty"));
});

afterEach(async () => {
  await fx.close();
});

describe("a link to a folder inside the root", () => {
  it("is removed as one entry; the folder keeps its files", async () => {
    expectOk(await fx.storage.remove(fileAt(ROOT, "to-keep")));
    await expect(lstat(at("to-keep"))).rejects.toThrow();
    expect(await readdir(at("keep"))).toEqual(["a.md"]);
  });

  it("to a folder holding no file does not exist, as the folder does not", async () => {
    expectCode(await fx.storage.stat(entryAt(ROOT, "to-empty")), "not_found");
    expectCode(await fx.storage.remove(fileAt(ROOT, "to-empty")), "not_found");
    expectCode(await fx.storage.move(fileAt(ROOT, "to-empty"), fileAt(ROOT, "elsewhere"), false), "not_found");
  });

  it("moves as one entry: the link itself, never the folder", async () => {
    expectOk(await fx.storage.move(fileAt(ROOT, "to-keep"), fileAt(ROOT, "deeper/moved"), false));
    expect(await readlink(at("deeper", "moved"))).toBe("keep");
    await expect(lstat(at("to-keep"))).rejects.toThrow();
    expect(await readdir(at("keep"))).toEqual(["a.md"]);
  });

  it("is still a folder to move onto, and a real folder is still refused", async () => {
    expectOk(await put(fx.storage, ROOT, "f.md", "f"));
    expectCode(await fx.storage.move(fileAt(ROOT, "f.md"), fileAt(ROOT, "to-keep"), true), "conflict");
    expectCode(await fx.storage.remove(fileAt(ROOT, "keep")), "conflict");
    expectCode(await fx.storage.move(fileAt(ROOT, "keep"), fileAt(ROOT, "kept"), false), "conflict");
    expect(await readdir(at("keep"))).toEqual(["a.md"]);
  });
});
