import { readFileSync, statSync } from "node:fs";
import { AdminClient } from "../clients/typescript/admin-client.ts";
import { FsCap } from "../clients/typescript/fs-cap.ts";
import type { CommandInput, CommandSpec, OptionSpec } from "./command-spec.ts";
import { UsageError } from "./usage-error.ts";

export const DEFAULT_VAULT_URL = "http://127.0.0.1:8787";

const CAP_URL_SHAPE = /^https?:\/\/[^\s]+\/object\/[^/\s]+\/?$/;

/** A cap file holds one URL; anything much bigger is not one. */
const MAX_CAP_FILE_BYTES = 4096;

export const CAP_FILE_OPTION: OptionSpec = {
  type: "string",
  value: "PATH",
  help: "read the cap URL from this file (unlike an argument, not visible in `ps`)",
};

/** Commands whose usage takes a cap accept --cap-file. */
export function takesCap(command: CommandSpec): boolean {
  return command.usage.includes("[CAP]");
}

export const ARGUMENT_WARNING =
  "capvault: warning: a cap URL given as an argument is visible to other users (ps, shell history); prefer CAPVAULT_CAP or --cap-file\n";

/**
 * Takes the cap from `--cap-file PATH`, else from the first positional when
 * it is a cap URL, else from `CAPVAULT_CAP`. No relative path can look like a
 * cap URL (`//` is an empty segment, which the vault refuses), so `capvault
 * ls notes` with CAPVAULT_CAP set and `capvault ls <url> notes` are never
 * ambiguous. A cap URL as an argument still works, with one line of warning
 * on stderr: every local user can read it in the process list.
 *
 * Error messages never quote the URL or the file's content: it is a secret.
 */
export function capFromInput(input: CommandInput, command: string): { cap: FsCap; rest: string[] } {
  const [first, ...others] = input.positionals;
  const firstIsUrl = first !== undefined && /^https?:\/\//i.test(first);
  const capFile = input.values["cap-file"];
  if (typeof capFile === "string") {
    if (firstIsUrl) throw new UsageError("give the cap once: --cap-file or a cap URL argument, not both", command);
    return { cap: newCap(readCapFile(capFile, command), input, command), rest: input.positionals };
  }
  if (firstIsUrl) {
    if (!CAP_URL_SHAPE.test(first))
      throw new UsageError("the first argument is a URL but not a cap URL (<origin>/object/<token>)", command);
    input.io.stderr.write(ARGUMENT_WARNING);
    return { cap: newCap(first, input, command), rest: others };
  }
  const fromEnv = input.io.env.CAPVAULT_CAP;
  if (fromEnv === undefined || fromEnv === "") {
    throw new UsageError(
      "no cap: set CAPVAULT_CAP, use --cap-file PATH, or pass a cap URL as the first argument",
      command,
    );
  }
  if (!CAP_URL_SHAPE.test(fromEnv.trim()))
    throw new UsageError("CAPVAULT_CAP is not a cap URL (<origin>/object/<token>)", command);
  return { cap: newCap(fromEnv.trim(), input, command), rest: input.positionals };
}

function readCapFile(path: string, command: string): string {
  let text: string;
  try {
    if (statSync(path).size > MAX_CAP_FILE_BYTES) throw new Error("too big");
    text = readFileSync(path, "utf8").trim();
  } catch {
    throw new UsageError("cannot read the --cap-file (a file holding one cap URL)", command);
  }
  if (!CAP_URL_SHAPE.test(text))
    throw new UsageError("the --cap-file does not hold a cap URL (<origin>/object/<token>)", command);
  return text;
}

function newCap(url: string, input: CommandInput, command: string): FsCap {
  try {
    return new FsCap(url, { ...(input.io.fetch ? { fetch: input.io.fetch } : {}), holder: input.holder });
  } catch {
    throw new UsageError("not a cap URL (<origin>/object/<token>)", command);
  }
}

export const ADMIN_TOKEN_FILE_OPTION: OptionSpec = {
  type: "string",
  value: "PATH",
  help: "read the admin token from this file, e.g. .capvault/admin-token (also CAPVAULT_ADMIN_TOKEN_FILE)",
};

/**
 * The admin client from `CAPVAULT_URL` (default http://127.0.0.1:8787) and the
 * admin token: `--admin-token-file`, else `CAPVAULT_ADMIN_TOKEN_FILE`, else
 * `CAPVAULT_ADMIN_TOKEN`. A file keeps the token out of the process list.
 */
export function adminCredentials(input: CommandInput, command: string): { url: string; token: string } {
  const flagFile = input.values["admin-token-file"];
  const file = typeof flagFile === "string" ? flagFile : input.io.env.CAPVAULT_ADMIN_TOKEN_FILE || undefined;
  let token = input.io.env.CAPVAULT_ADMIN_TOKEN;
  if (file !== undefined) {
    try {
      if (statSync(file).size > MAX_CAP_FILE_BYTES) throw new Error("too big");
      token = readFileSync(file, "utf8").trim();
    } catch {
      throw new UsageError(
        "cannot read the admin token file (the launcher keeps it in .capvault/admin-token)",
        command,
      );
    }
  }
  if (token === undefined || token === "") {
    throw new UsageError(
      "no admin token: use --admin-token-file .capvault/admin-token (the launcher's state folder) or set CAPVAULT_ADMIN_TOKEN",
      command,
    );
  }
  const url = input.io.env.CAPVAULT_URL || DEFAULT_VAULT_URL;
  if (!/^https?:\/\//i.test(url)) throw new UsageError("CAPVAULT_URL is not an http(s) URL", command);
  return { url, token };
}

/** The admin client of {@link adminCredentials}. */
export function adminFromEnv(input: CommandInput, command: string): AdminClient {
  const { url, token } = adminCredentials(input, command);
  try {
    return new AdminClient(url, token, input.io.fetch ? { fetch: input.io.fetch } : {});
  } catch {
    throw new UsageError("CAPVAULT_URL is not an http(s) URL", command);
  }
}
