/**
 * The memory tool's `delete` and `rename` of folders on the disk backend,
 * where a folder may hold a link to another folder inside the cap. They act
 * on the link as `rm -r` and `mv` do: deleting removes the link and never the
 * files of the folder it leads to; renaming moves the link itself.
 */
import { lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryTool } from "../../clients/typescript/memory-tool.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;
let memory: ReturnType<typeof createMemoryTool>["call"];
const at = (...parts: string[]) => path.join(vault.diskRoot, ...parts);

/** A folder `name` holding two files another folder will link to. */
async function kept(name: string): Promise<void> {
  await mkdir(at(name), { recursive: true });
  await writeFile(at(name, "a.md"), "a\n");
  await writeFile(at(name, "b.md"), "b\n");
}

async function expectKept(name: string): Promise<void> {
  expect((await readdir(at(name))).sort()).toEqual(["a.md", "b.md"]);
  expect(await readFile(at(name, "a.md"), "utf8")).toBe("a\n");
}

const isLink = async (...parts: string[]) => (await lstat(at(...parts))).isSymbolicLink();
const exists = (...parts: string[]) =>
  lstat(at(...parts)).then(
    () => true,
    () => false,
  );

beforeAll(async () => {
  vault = await startTestVault();
  memory = createMemoryTool(vault.diskCapUrl).call;
});

afterAll(async () => {
  await vault?.stop();
});

describe("delete", () => {
  it("of a folder holding a link to another folder removes the link, not the other folder's files", async () => {
    await kept("keep1");
    await mkdir(at("box1"));
    await writeFile(at("box1", "own.md"), "own\n");
    await symlink("../keep1", at("box1", "to-keep"));
    expect((await memory({ command: "delete", path: "/memories/box1" })).text).toBe(
      "Successfully deleted /memories/box1",
    );
    expect(await exists("box1")).toBe(false);
    await expectKept("keep1");
  });

  it("of a link to a folder removes the link only", async () => {
    await kept("keep2");
    await symlink("keep2", at("short2"));
    expect((await memory({ command: "delete", path: "/memories/short2" })).text).toBe(
      "Successfully deleted /memories/short2",
    );
    expect(await exists("short2")).toBe(false);
    await expectKept("keep2");
  });
});

describe("rename", () => {
  it("of a link to a folder moves the link, atomically, and leaves the folder alone", async () => {
    await kept("keep3");
    await symlink("keep3", at("short3"));
    expect((await memory({ command: "rename", old_path: "/memories/short3", new_path: "/memories/moved3" })).text).toBe(
      "Successfully renamed /memories/short3 to /memories/moved3",
    );
    expect(await exists("short3")).toBe(false);
    expect(await isLink("moved3")).toBe(true);
    expect(await readlink(at("moved3"))).toBe("keep3");
    await expectKept("keep3");
  });

  it("of a folder holding a link to another folder moves the link with it, not the other folder's files", async () => {
    await kept("keep4");
    await mkdir(at("box4"));
    await writeFile(at("box4", "own.md"), "own\n");
    await symlink("../keep4", at("box4", "to-keep"));
    expect((await memory({ command: "rename", old_path: "/memories/box4", new_path: "/memories/moved4" })).text).toBe(
      "Successfully renamed /memories/box4 to /memories/moved4",
    );
    expect(await exists("box4")).toBe(false);
    expect(await readFile(at("moved4", "own.md"), "utf8")).toBe("own\n");
    expect(await isLink("moved4", "to-keep")).toBe(true);
    await expectKept("keep4");
    // Through the moved link, the same folder: nothing was copied.
    expect((await memory({ command: "view", path: "/memories/moved4/to-keep/a.md" })).text).toContain("a");
  });
});

describe("the folder routes", () => {
  it("DELETE /folder?recursive=true of a folder holding a link removes the link, not the other folder's files", async () => {
    await kept("keep5");
    await mkdir(at("box5"));
    await writeFile(at("box5", "own.md"), "own\n");
    await symlink("../keep5", at("box5", "to-keep"));
    const res = await fetch(`${vault.diskCapUrl}/folder?path=box5&recursive=true`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ deleted: { files: 1, folders: 2 } });
    expect(await exists("box5")).toBe(false);
    await expectKept("keep5");
  });

  it("DELETE /folder?recursive=true of a link to a folder removes the link only", async () => {
    await kept("keep6");
    await symlink("keep6", at("link6"));
    const res = await fetch(`${vault.diskCapUrl}/folder?path=link6&recursive=true`, { method: "DELETE" });
    expect(await res.json()).toEqual({ deleted: { files: 0, folders: 1 } });
    expect(await exists("link6")).toBe(false);
    await expectKept("keep6");
  });

  it("POST /move of a folder holding a link moves the link as one entry", async () => {
    await kept("keep7");
    await mkdir(at("box7", "sub"), { recursive: true });
    await writeFile(at("box7", "sub", "own.md"), "own\n");
    await symlink("../../keep7", at("box7", "sub", "to-keep"));
    const res = await fetch(`${vault.diskCapUrl}/move`, {
      method: "POST",
      body: JSON.stringify({ from: "box7", to: "moved7" }),
    });
    expect(await res.json()).toEqual({ from: "box7", to: "moved7", moved: { files: 1, folders: 3 } });
    expect(await exists("box7")).toBe(false);
    expect(await isLink("moved7", "sub", "to-keep")).toBe(true);
    expect(await readlink(at("moved7", "sub", "to-keep"))).toBe("../../keep7");
    await expectKept("keep7");
  });
});
