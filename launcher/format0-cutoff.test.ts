import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { format0Cutoff } from "./format0-cutoff.ts";
import { loadVaultKey } from "./vault-key.ts";

let state: string;
beforeEach(async () => {
  state = await mkdtemp(path.join(os.tmpdir(), "capvault-format0-"));
});
afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

const ranBefore = () => writeFile(path.join(state, "vault.json"), '{"createdAt":"2026-11-30T05:31:00.000Z"}\n');

describe("format0Cutoff", () => {
  it("records once when a format-0 folder (a vault ran, no token key) gets its first key, and says the same after", async () => {
    await ranBefore();
    const before = Date.now();
    const cutoff = await format0Cutoff(state);
    expect(cutoff).toBeGreaterThanOrEqual(before);
    await loadVaultKey(state);
    expect(await format0Cutoff(state)).toBe(cutoff);
    expect((await readFile(path.join(state, "format-0-until"), "utf8")).trim()).toBe(String(cutoff));
  });

  it("is null for a new folder and for one that already had a key, and records nothing", async () => {
    expect(await format0Cutoff(state)).toBeNull();
    await loadVaultKey(state);
    await ranBefore();
    expect(await format0Cutoff(state)).toBeNull();
    await expect(readFile(path.join(state, "format-0-until"))).rejects.toThrow(/ENOENT/);
  });

  it("counts a key file a cut-short start left empty as no key", async () => {
    await ranBefore();
    await writeFile(path.join(state, "token-key"), "");
    expect(await format0Cutoff(state)).not.toBeNull();
  });
});
