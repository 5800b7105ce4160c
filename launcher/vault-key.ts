import { randomBytes } from "node:crypto";
import { readFile, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { tokenKeyBytes } from "../shared/token-key.ts";

const FILE = "token-key";

/**
 * The vault key that signs cap tokens (`CAPVAULT_TOKEN_KEY`): the one saved in
 * the state folder, else a new one (256 random bits) saved there with mode
 * 0600. It must outlive restarts, or every cap minted so far would stop
 * verifying. A saved key too weak to use stops the start rather than running
 * a vault that refuses every token.
 */
export async function loadVaultKey(state: string): Promise<string> {
  const file = path.join(state, FILE);
  const saved = await readFile(file, "utf8").then(
    (text) => text.trim(),
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return null;
      throw err;
    },
  );
  if (saved) {
    if (!tokenKeyBytes(saved))
      throw new Error(`${FILE} in the state folder is not a base64url key of at least 32 bytes`);
    return saved;
  }
  // Empty: a start cut short between creating the file and writing it, before
  // any token could be signed with it. Made again.
  if (saved === "") await unlink(file);
  const key = randomBytes(32).toString("base64url");
  await writeFile(file, key + "\n", { mode: 0o600, flag: "wx" });
  return key;
}
