import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const FILE = "format-0-until";

async function readTrimmed(file: string): Promise<string | null> {
  return readFile(file, "utf8").then(
    (text) => text.trim(),
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return null;
      throw err;
    },
  );
}

/**
 * When this state folder left state format 0 (ms since the epoch), or `null`
 * for a vault that never was format 0. Format 0 (before signed tokens) kept
 * no `token-key`; every later start makes one. So a folder a vault already ran
 * in (`vault.json`) that has no usable key yet is format 0, and this start,
 * before its key is made, is when it leaves it: no signed token predates it.
 * Saved once (`format-0-until`), so later starts say the same; the worker
 * gets it as `CAPVAULT_FORMAT0_UNTIL` for `capvault reissue-legacy`
 * (docs/upgrading.md). Must run before `loadVaultKey`.
 */
export async function format0Cutoff(state: string): Promise<number | null> {
  const file = path.join(state, FILE);
  const saved = await readTrimmed(file);
  if (saved) {
    const ms = Number(saved);
    if (!Number.isSafeInteger(ms) || ms <= 0) throw new Error(`${FILE} in the state folder is not a time in ms`);
    return ms;
  }
  const key = await readTrimmed(path.join(state, "token-key"));
  const ran = (await readTrimmed(path.join(state, "vault.json"))) !== null;
  if (key || !ran) return null;
  const now = Date.now();
  await writeFile(file, `${now}\n`, { mode: 0o600 });
  return now;
}
