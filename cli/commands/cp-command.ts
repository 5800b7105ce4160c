import path from "node:path";
import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { formatBytes, formatWrite } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";
import { remoteBaseName } from "../remote-path.ts";
import { terminalSafe as safe } from "../terminal-safe.ts";
import { downloadFile } from "../transfer/download-file.ts";
import { endpoints } from "../transfer/endpoints.ts";
import { runFolderTransfer } from "../transfer/folder-transfer.ts";
import { checkLocalFile } from "../transfer/local-source.ts";
import { localFileTarget } from "../transfer/local-target.ts";
import { progressStream } from "../transfer/progress-bar.ts";
import { remoteFileTarget } from "../transfer/remote-target.ts";
import { FOLDER_OPTIONS, RECURSIVE_OPTION, refuseFolderOptions } from "../transfer/transfer-options.ts";
import { uploadFile } from "../transfer/upload-file.ts";
import { UsageError } from "../usage-error.ts";

export const cpCommand: CommandSpec = {
  name: "cp",
  summary: "copy a file or folder between the local disk and the cap (:PATH)",
  usage: "cp [CAP] SRC DST [-r] [--dry-run] [-v] [--transfers N]",
  description:
    "Copies between the local disk and the cap. The remote side is written :PATH, like rclone's remote:path\n" +
    "(: alone is the cap's root; the cap itself comes from CAPVAULT_CAP or --cap-file); the other side is local.\n" +
    "  capvault cp ./a.md :notes/       upload a.md into notes/ (a DST ending in /, or an existing folder)\n" +
    "  capvault cp :notes/a.md .        download into the current folder\n" +
    "  capvault cp -r ./site :www       the contents of ./site go into www (as rclone copy; not www/site)\n" +
    "  capvault cp -r :www ./site       and back\n" +
    "With -r, files whose size and hash already match are skipped: the vault's SHA-256 when its listing has one,\n" +
    "else its etag (the MD5 of the bytes) against the local file's. 8 files are in flight at once (--transfers).\n" +
    "Symlinks on the local side are never followed; names from the vault must be plain names (no .., no\n" +
    "separators, no control characters) or are skipped, so a download never writes outside the local folder.\n" +
    "Progress goes to stderr on a terminal. --json prints {direction, dryRun, files, bytes, deleteSkipped,\n" +
    "skippedLocal, actions: [{op, path, size}], issues: [{path, code, message}]}. Exit 1 if any file failed.",
  options: { recursive: RECURSIVE_OPTION, ...FOLDER_OPTIONS },
  async run(input) {
    const { cap, rest } = capFromInput(input, "cp");
    const [source, destination] = positionalArgs(rest, { required: ["SRC", "DST"] }, "cp");
    const ends = endpoints(source, destination, "cp");
    if (input.values.recursive === true) {
      return runFolderTransfer(input, cap, { ...ends, deleteExtra: false, command: "cp" });
    }
    refuseFolderOptions(input.values, "cp");
    if (ends.direction === "up") {
      await checkLocalFile(ends.local, "cp");
      const target = await remoteFileTarget(cap, destination.slice(1), path.basename(path.resolve(ends.local)));
      const result = await uploadFile(cap, ends.local, target, {
        through: (size) => progressStream(input.io, target, size),
      });
      if (input.json) await printJson(input.io, { path: target, ...result });
      else await writeOut(input.io.stdout, formatWrite(target, result));
      return;
    }
    if (ends.remote === "" || ends.remote.endsWith("/")) throw new UsageError("SRC names a folder: use cp -r", "cp");
    const target = await localFileTarget(ends.local, remoteBaseName(ends.remote));
    const done = await downloadFile(input.io, cap, ends.remote, target);
    if (done === null) return;
    if (input.json) await printJson(input.io, done);
    else
      await writeOut(
        input.io.stdout,
        `downloaded ${safe(ends.remote)} to ${safe(target)} (${formatBytes(done.size)})\n`,
      );
  },
};
