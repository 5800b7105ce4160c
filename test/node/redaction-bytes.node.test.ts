/**
 * Redaction destroys bytes for good: after a version is redacted, its bytes
 * are in no file of the vault's state, disk root or temp folders, on either
 * backend. A row's `DELETE` would not do it (SQLite keeps deleted bytes in
 * its WAL and free pages), which is why small R2 versions are blobs too
 * (storage-adapters/version-blobs.ts).
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;

beforeAll(async () => {
  vault = await startTestVault();
}, 120_000);

afterAll(async () => {
  await vault?.stop();
});

/** Every regular file below `dir` that holds `needle` (symlinks are not followed). */
async function filesHolding(dir: string, needle: Buffer): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const bytes = await readFile(file).catch(() => null);
    if (bytes?.includes(needle)) found.push(path.relative(dir, file));
  }
  return found;
}

describe.each(["r2", "disk"] as const)("redaction on %s", (backend) => {
  it("a redacted small version's bytes are in no file the vault keeps", async () => {
    const fs = new FsCap(backend === "r2" ? vault.rootCapUrl : vault.diskCapUrl);
    const secret = `sk-live-${randomBytes(16).toString("hex")}`;
    await fs.write(`keys/${backend}.txt`, secret);
    await fs.write(`keys/${backend}.txt`, "rotated");
    const { versions } = await fs.versions(`keys/${backend}.txt`);
    const leaked = versions.find((v) => v.operation === "created")!;
    const base = path.dirname(vault.state);
    // The bytes are kept until the redaction: the check below can find them.
    expect(await filesHolding(base, Buffer.from(secret))).not.toEqual([]);

    await fs.redact(leaked.id);
    await expect(fs.readVersion(leaked.id)).rejects.toMatchObject({ code: "not_found" });
    expect(await filesHolding(base, Buffer.from(secret))).toEqual([]);
  });
});
