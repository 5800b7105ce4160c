import { readFileSync, statSync } from "node:fs";
import type { CommandInput, OptionSpec } from "../command-spec.ts";
import { Interrupted } from "../interrupted.ts";
import { UsageError } from "../usage-error.ts";
import { ArchiveError } from "./archive-error.ts";

/**
 * An archive's passphrase: from a file (`--passphrase-file`), a variable the
 * admin names (`--passphrase-env NAME`), or a prompt on the terminal, never
 * from a command-line argument, where `ps` would show it to every local user.
 */
export const PASSPHRASE_OPTIONS: Record<string, OptionSpec> = {
  "passphrase-file": { type: "string", value: "PATH", help: "read the archive's passphrase from this file" },
  "passphrase-env": {
    type: "string",
    value: "NAME",
    help: "read the archive's passphrase from the environment variable NAME",
  },
};

const MAX_PASSPHRASE_BYTES = 4096;

/** The passphrase given by file or variable, or `undefined` when neither option was used. */
export function givenPassphrase(input: CommandInput, command: string): string | undefined {
  const file = input.values["passphrase-file"];
  const env = input.values["passphrase-env"];
  if (typeof file === "string" && typeof env === "string")
    throw new UsageError("give --passphrase-file or --passphrase-env, not both", command);
  let phrase: string | undefined;
  if (typeof file === "string") {
    try {
      if (statSync(file).size > MAX_PASSPHRASE_BYTES) throw new Error("too big");
      phrase = readFileSync(file, "utf8").replace(/\r?\n$/, "");
    } catch {
      throw new UsageError("cannot read the --passphrase-file", command);
    }
  } else if (typeof env === "string") {
    phrase = input.io.env[env];
    if (phrase === undefined) throw new UsageError(`the variable named by --passphrase-env is not set`, command);
  }
  if (phrase !== undefined && phrase.length < 8)
    throw new UsageError("the passphrase must be at least 8 characters", command);
  return phrase;
}

/** Asks on the terminal without echo; `null` when stdin is not a terminal. */
export async function promptPassphrase(input: CommandInput, prompt: string): Promise<string | null> {
  const stdin = input.io.stdin as NodeJS.ReadStream;
  if (!stdin.isTTY || typeof stdin.setRawMode !== "function" || !input.io.stderr.isTTY) return null;
  input.io.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = "";
      const onData = (data: Buffer) => {
        for (const ch of data.toString("utf8")) {
          if (ch === "\r" || ch === "\n") {
            stdin.off("data", onData);
            return resolve(typed);
          }
          if (ch === "\u0003") {
            stdin.off("data", onData);
            return reject(new Interrupted());
          }
          if (ch === "\u007f" || ch === "\b") typed = typed.slice(0, -1);
          else typed += ch;
        }
      };
      stdin.on("data", onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    input.io.stderr.write("\n");
  }
}

/** The export's passphrase: given, or asked twice on the terminal; `null` for an unencrypted archive. */
export async function exportPassphrase(input: CommandInput, command: string): Promise<string | null> {
  const given = givenPassphrase(input, command);
  if (given !== undefined) return given;
  if (input.values.encrypt !== true) return null;
  const first = await promptPassphrase(input, "passphrase for the archive: ");
  if (first === null)
    throw new UsageError("--encrypt needs a terminal, --passphrase-file PATH or --passphrase-env NAME", command);
  if (first.length < 8) throw new UsageError("the passphrase must be at least 8 characters", command);
  const again = await promptPassphrase(input, "again: ");
  if (again !== first) throw new ArchiveError("wrong_passphrase", "the two passphrases differ; nothing was written");
  return first;
}
