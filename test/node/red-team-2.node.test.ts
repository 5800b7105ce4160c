/**
 * Red team of the session's new surfaces on the real launcher (the node
 * project's shared vault): what only a real disk root can show.
 */
import { randomUUID } from "node:crypto";
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

let vault: SharedVault;
const SECRET = "SECRET-OUTSIDE-THE-SEARCHED-ROOT";

beforeAll(async () => {
  vault = await sharedVault("red-team-2");
});

describe("content search on a disk root", () => {
  it("held: links leading out of the root (a file and a folder) are never searched and name no host path", async () => {
    const outside = path.join(path.dirname(vault.diskRoot), `red-team-2-outside-${randomUUID()}`);
    await mkdir(path.join(outside, "deep"), { recursive: true });
    await writeFile(path.join(outside, "secret.txt"), `${SECRET}\n`);
    await writeFile(path.join(outside, "deep", "more.txt"), `${SECRET}\n`);
    await mkdir(path.join(vault.diskRoot, "tree"), { recursive: true });
    await writeFile(path.join(vault.diskRoot, "tree", "own.txt"), `${SECRET} (a copy inside)\n`);
    await symlink(path.join(outside, "secret.txt"), path.join(vault.diskRoot, "tree", "leak.txt"));
    await symlink(outside, path.join(vault.diskRoot, "tree", "leakdir"));
    await symlink("..", path.join(vault.diskRoot, "tree", "up"));
    for (const mode of ["lines", "count", "files"]) {
      const res = await fetch(
        `${vault.diskCapUrl}/search?${new URLSearchParams({ pattern: "SECRET", path: "tree", mode })}`,
      );
      const text = await res.text();
      expect(res.status, text).toBe(200);
      expect(text).not.toContain(outside);
      expect(text).not.toContain(vault.vaultDiskRoot);
      expect(text).not.toContain(vault.state);
      const page = JSON.parse(text) as {
        matches?: { path: string; text: string }[];
        counts?: { path: string }[];
        files?: string[];
      };
      const paths = [
        ...(page.matches ?? []).map((m) => m.path),
        ...(page.counts ?? []).map((c) => c.path),
        ...(page.files ?? []),
      ];
      expect([...new Set(paths)]).toEqual(["tree/own.txt"]);
    }
  });
});

describe("folder operations on a disk root", () => {
  it("held: a recursive delete or a folder move of a link to a folder never touches what it leads to", async () => {
    const outside = path.join(path.dirname(vault.diskRoot), `red-team-2-out-${randomUUID()}`);
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, "keep.txt"), "keep\n");
    const base = path.join(vault.diskRoot, "ops");
    await mkdir(path.join(base, "real"), { recursive: true });
    await writeFile(path.join(base, "real", "mine.txt"), "mine\n");
    await symlink(outside, path.join(base, "away"));
    await symlink("real", path.join(base, "alias"));
    for (const target of ["ops/away", "ops/alias"]) {
      const res = await fetch(
        `${vault.diskCapUrl}/folder?${new URLSearchParams({ path: target, recursive: "true" })}`,
        {
          method: "DELETE",
        },
      );
      const text = await res.text();
      expect(res.status, text).toBeLessThan(500);
      expect(text).not.toContain(outside);
      expect(text).not.toContain(vault.vaultDiskRoot);
    }
    expect(await readFile(path.join(outside, "keep.txt"), "utf8")).toBe("keep\n");
    expect(await readFile(path.join(base, "real", "mine.txt"), "utf8")).toBe("mine\n");
    await symlink("real", path.join(base, "alias2"));
    const moved = await fetch(`${vault.diskCapUrl}/move`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ from: "ops/alias2", to: "ops/real/inside" }),
    });
    expect(moved.status, await moved.text()).toBeLessThan(500);
    expect(await readFile(path.join(base, "real", "mine.txt"), "utf8")).toBe("mine\n");
  });
});
