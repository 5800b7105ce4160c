import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";

const FILE = "admin-token";

/**
 * The admin token: the configured one, else the one saved in the state folder,
 * else a new one saved there with mode 0600. `fresh` says it was just made, so
 * the launcher prints it exactly once.
 */
export async function loadAdminToken(state: string, configured: string | null): Promise<{ token: string; fresh: boolean }> {
  if (configured) return { token: configured, fresh: false };
  const file = path.join(state, FILE);
  try {
    const saved = (await readFile(file, "utf8")).trim();
    if (saved) return { token: saved, fresh: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const token = randomBytes(32).toString("base64url");
  await writeFile(file, token + "\n", { mode: 0o600, flag: "wx" });
  return { token, fresh: true };
}
