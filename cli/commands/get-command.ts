import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { formatBytes } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";
import { remoteBaseName, remotePathArg } from "../remote-path.ts";
import { terminalSafe as safe } from "../terminal-safe.ts";
import { downloadFile } from "../transfer/download-file.ts";
import { runFolderTransfer } from "../transfer/folder-transfer.ts";
import { localFileTarget, localFolderTarget } from "../transfer/local-target.ts";
import { FOLDER_OPTIONS, RECURSIVE_OPTION, refuseFolderOptions } from "../transfer/transfer-options.ts";
import { UsageError } from "../usage-error.ts";

export const getCommand: CommandSpec = {
  name: "get",
  summary: "download a file (or a folder with -r)",
  usage: "get [CAP] REMOTE [LOCAL|-] [-r] [--dry-run] [-v]",
  description:
    "Downloads the file REMOTE, as sftp's get does: LOCAL defaults to ./NAME (REMOTE's last segment);\n" +
    "a LOCAL ending in /, or an existing local folder, receives NAME inside it; - writes to stdout (like cat).\n" +
    "The file is written atomically (temp file, then rename) and checked against the vault's etag.\n" +
    "With -r, REMOTE is a folder (. or / for the cap's root) and its contents go into LOCAL (default ./NAME;\n" +
    "LOCAL/ → LOCAL/NAME), skipping files whose size and hash already match. Names from the vault that are\n" +
    "not plain names (.., separators, control characters) are refused, and local symlinks are never written\n" +
    "through: a download never lands outside LOCAL.",
  options: { recursive: RECURSIVE_OPTION, ...FOLDER_OPTIONS },
  async run(input) {
    const { cap, rest } = capFromInput(input, "get");
    const [remoteArg, local] = positionalArgs(rest, { required: ["REMOTE"], optional: ["LOCAL"] }, "get");
    const remote = remotePathArg(remoteArg);
    const name = remoteBaseName(remote);
    if (input.values.recursive === true) {
      if (local === "-") throw new UsageError("get -r writes a folder, not stdout", "get");
      const target = localFolderTarget(local, name);
      return runFolderTransfer(input, cap, {
        direction: "down",
        local: target,
        remote,
        deleteExtra: false,
        command: "get",
      });
    }
    refuseFolderOptions(input.values, "get");
    if (remote === "" || remote.endsWith("/")) throw new UsageError("REMOTE names a folder: use get -r", "get");
    if (local === "-" && input.json)
      throw new UsageError("get - writes the file's bytes; --json does not apply", "get");
    const target = local === "-" ? "-" : await localFileTarget(local, name);
    const done = await downloadFile(input.io, cap, remote, target);
    if (done === null) return;
    if (input.json) await printJson(input.io, done);
    else await writeOut(input.io.stdout, `downloaded ${safe(remote)} to ${safe(target)} (${formatBytes(done.size)})\n`);
  },
};
