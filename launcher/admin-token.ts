import { randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { MIN_ADMIN_TOKEN_LENGTH } from "./settings.ts";

const FILE = "admin-token";

/**
 * The admin token: the configured one, else the one in `tokenFile` (default
 * `<state>/admin-token`), else a new one saved there with mode 0600. `fresh`
 * says it was just made, so the launcher prints it exactly once.
 *
 * A file is the preferred source: unlike a flag or an environment variable,
 * it never shows in the process list or in /proc/PID/environ.
 */
export async function loadAdminToken(
  state: string,
  configured: string | null,
  tokenFile: string | null = null,
): Promise<{ token: string; fresh: boolean }> {
  if (configured) return { token: configured, fresh: false };
  const file = tokenFile ?? path.join(state, FILE);
  try {
    const saved = (await readFile(file, "utf8")).trim();
    if (saved.length >= MIN_ADMIN_TOKEN_LENGTH) return { token: saved, fresh: false };
    if (saved || tokenFile)
      throw new Error(`the admin token file must hold at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT" || tokenFile) throw err;
  }
  const token = randomBytes(32).toString("base64url");
  await writeFile(file, token + "\n", { mode: 0o600, flag: "wx" });
  return { token, fresh: true };
}
