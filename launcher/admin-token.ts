import { randomBytes } from "node:crypto";
import { readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { MIN_ADMIN_TOKEN_LENGTH } from "./settings.ts";

const FILE = "admin-token";
/** Present while a generated token has not been printed yet: a start that fails after saving it shows it on the next. */
const UNSHOWN = "admin-token.unshown";

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
    if (saved.length >= MIN_ADMIN_TOKEN_LENGTH) {
      const unshown = tokenFile === null && (await exists(path.join(state, UNSHOWN)));
      return { token: saved, fresh: unshown };
    }
    if (saved || tokenFile)
      throw new Error(`the admin token file must hold at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT" || tokenFile) throw err;
  }
  const token = randomBytes(32).toString("base64url");
  // The marker first: a crash between the two writes then shows the token rather than losing it.
  await writeFile(path.join(state, UNSHOWN), "", { mode: 0o600 });
  await writeFile(file, token + "\n", { mode: 0o600, flag: "wx" });
  return { token, fresh: true };
}

/** Called once the generated token is on the operator's screen: later starts no longer print it. */
export async function markAdminTokenShown(state: string): Promise<void> {
  await rm(path.join(state, UNSHOWN), { force: true });
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
