import { closeSync, constants, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { HolderKey } from "../clients/typescript/holder.ts";
import { type HolderJwk, parseHolderJwk } from "../shared/holder-key.ts";
import type { CommandInput, OptionSpec } from "./command-spec.ts";
import { UsageError } from "./usage-error.ts";

/** A key file is one small JWK; anything bigger is not one. */
const MAX_KEY_FILE_BYTES = 4096;

export const KEY_FILE_OPTION: OptionSpec = {
  type: "string",
  value: "PATH",
  help: "sign each request with this holder key file, for a holder-bound cap (also CAPVAULT_KEY_FILE)",
};

function readJson(path: string): unknown {
  if (statSync(path).size > MAX_KEY_FILE_BYTES) throw new Error("too big");
  return JSON.parse(readFileSync(path, "utf8"));
}

/**
 * The holder key from `--key-file PATH`, else `CAPVAULT_KEY_FILE`, or none:
 * imported non-extractable, so nothing in this process can print it back.
 * Errors never quote the file's content (a private key).
 */
export async function holderFromInput(input: CommandInput, command: string): Promise<HolderKey | undefined> {
  const flag = input.values["key-file"];
  const path = typeof flag === "string" ? flag : input.io.env.CAPVAULT_KEY_FILE || undefined;
  if (path === undefined) return undefined;
  try {
    return await HolderKey.fromKeyFile(readJson(path));
  } catch {
    throw new UsageError(
      "cannot read the key file (a private Ed25519 or P-256 JWK, made by `capvault key new`)",
      command,
    );
  }
}

/**
 * `--to` / `--holder`: a public JWK given inline (`{"kty":"OKP",…}`) or a
 * file holding one or a key file (its private part is dropped here, never sent).
 */
export function publicKeyArg(value: string, option: string, command: string): HolderJwk {
  let raw: unknown;
  try {
    raw = value.trimStart().startsWith("{") ? JSON.parse(value) : readJson(value);
  } catch {
    throw new UsageError(`--${option} takes a public JWK or a key file`, command);
  }
  const { d: _private, ...pub } = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  const parsed = parseHolderJwk(pub);
  if (!parsed.ok) throw new UsageError(`--${option} is not an Ed25519 or P-256 public key`, command);
  return parsed.jwk;
}

/** Writes a fresh key file at `path` (mode 0600, never over an existing file); returns its public half. */
export async function writeNewKeyFile(path: string, algorithm: "Ed25519" | "P-256"): Promise<HolderKey> {
  const key = await HolderKey.generate({ algorithm, extractable: true });
  const text = `${JSON.stringify(await key.exportKeyFile())}\n`;
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return key;
}
