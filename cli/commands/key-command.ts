import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { writeNewKeyFile } from "../holder-key-file.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs, stringOption } from "../option-values.ts";
import { UsageError } from "../usage-error.ts";

export const keyCommand: CommandSpec = {
  name: "key",
  summary: "make a holder key file, for caps bound to you (share --to, mint --holder)",
  usage: "key new PATH [--alg Ed25519|P-256]",
  description:
    "Writes a fresh private key to PATH (a JWK, mode 0600; never over an existing file) and prints its\n" +
    "public key on stdout: give that to whoever shares a cap to you (`capvault share --to`), then use\n" +
    "the cap with --key-file PATH or CAPVAULT_KEY_FILE. --json prints {publicJwk, jkt}.",
  options: { alg: { type: "string", value: "Ed25519|P-256", help: "key type (default Ed25519)" } },
  async run(input) {
    const [verb, path] = positionalArgs(input.positionals, { required: ["new", "PATH"] }, "key");
    if (verb !== "new") throw new UsageError("the only key command is `key new PATH`", "key");
    const alg = stringOption(input.values.alg) ?? "Ed25519";
    if (alg !== "Ed25519" && alg !== "P-256") throw new UsageError("--alg is Ed25519 or P-256", "key");
    let key: Awaited<ReturnType<typeof writeNewKeyFile>>;
    try {
      key = await writeNewKeyFile(path, alg);
    } catch (error) {
      const exists = (error as NodeJS.ErrnoException).code === "EEXIST";
      throw new UsageError(exists ? "PATH exists: a key file is never overwritten" : "cannot write PATH", "key");
    }
    if (input.json) await printJson(input.io, { publicJwk: key.publicJwk, jkt: key.jkt });
    else await writeOut(input.io.stdout, `${JSON.stringify(key.publicJwk)}\n`);
  },
};
