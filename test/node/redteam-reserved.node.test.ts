import { readFile, symlink } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mintRoot, startTestVault, type TestVault } from "./test-vault.ts";

/**
 * Red team: the vault's own names (`.capvault-format`, `.capvault-meta/`,
 * `.capvault-versions/`, `.capvault-tmp-*`) are reserved in every letter
 * case. On a case-insensitive folder (WSL's /mnt/c, an ext4 casefold
 * directory, vfat) `.CAPVAULT-FORMAT` is the stamp itself, so a cap over
 * the whole disk folder could plant or overwrite it, or a sidecar.
 */

let vault: TestVault;
let disk: string;
let r2: string;

beforeAll(async () => {
  vault = await startTestVault();
  disk = (await mintRoot(vault, { backend: "disk", prefix: "" })).url;
  r2 = (await mintRoot(vault, { backend: "r2", prefix: "" })).url;
}, 120_000);

afterAll(async () => {
  await vault?.stop();
});

const SPELLINGS = [
  ".CAPVAULT-FORMAT",
  ".Capvault-format",
  ".capVault-meta/x",
  "a/.CAPVAULT-TMP-1",
  ".CAPVAULT-VERSIONS/x",
];

describe("reserved names in any letter case", () => {
  for (const [name, root] of [
    ["disk over the whole folder", () => disk],
    ["r2 over the whole bucket", () => r2],
  ] as const)
    it(`${name}: every spelling is refused on write, WebDAV and read`, async () => {
      for (const spelling of SPELLINGS) {
        const put = await fetch(`${root()}/file?path=${encodeURIComponent(spelling)}`, { method: "PUT", body: "{}" });
        expect(`${spelling} ${put.status}`).toBe(`${spelling} 400`);
        expect(((await put.json()) as { error: { code: string } }).error.code).toBe("invalid_path");
        const dav = await fetch(`${root()}/dav/${spelling}`, { method: "PUT", body: "{}" });
        expect(`dav ${spelling} ${dav.status}`).toMatch(/ 4\d\d$/);
        const get = await fetch(`${root()}/file?path=${encodeURIComponent(spelling)}`);
        expect(`get ${spelling} ${get.status}`).toBe(`get ${spelling} 400`);
      }
      expect(await readFile(path.join(vault.diskRoot, ".capvault-format"), "utf8")).toMatch(/"format"/);
    });

  it("a link inside the disk root to any spelling of a reserved name is refused", async () => {
    await symlink(".CAPVAULT-META", path.join(vault.diskRoot, "to-meta"));
    await symlink(".Capvault-format", path.join(vault.diskRoot, "to-stamp"));
    for (const link of ["to-meta/x", "to-stamp"]) {
      const read = await fetch(`${disk}/file?path=${link}`);
      expect(`${link} ${read.status}`).not.toBe(`${link} 200`);
      const write = await fetch(`${disk}/file?path=${link}`, { method: "PUT", body: "{}" });
      expect(`${link} ${write.status}`).not.toMatch(/ 20\d$/);
    }
  });
});
