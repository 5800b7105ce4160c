import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadVaultKey } from "./vault-key.ts";

let state: string;
beforeEach(async () => {
  state = await mkdtemp(path.join(os.tmpdir(), "capvault-key-"));
});
afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

describe("loadVaultKey", () => {
  it("makes a 256-bit key once, owner-only, and keeps it across starts", async () => {
    const key = await loadVaultKey(state);
    expect(Buffer.from(key, "base64url").length).toBe(32);
    const file = path.join(state, "token-key");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, "utf8")).trim()).toBe(key);
    expect(await loadVaultKey(state)).toBe(key);
  });

  it("refuses to start on a saved key too weak to sign tokens", async () => {
    await writeFile(path.join(state, "token-key"), "short\n", { mode: 0o600 });
    await expect(loadVaultKey(state)).rejects.toThrow(/not a base64url key of at least 32 bytes/);
  });

  it("makes the key again when a start was cut short and left the file empty", async () => {
    await writeFile(path.join(state, "token-key"), "", { mode: 0o600 });
    expect(Buffer.from(await loadVaultKey(state), "base64url").length).toBe(32);
  });
});
