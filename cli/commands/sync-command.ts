import { capFromInput } from "../cap-source.ts";
import type { CommandSpec } from "../command-spec.ts";
import { positionalArgs } from "../option-values.ts";
import { endpoints } from "../transfer/endpoints.ts";
import { runFolderTransfer } from "../transfer/folder-transfer.ts";
import { FOLDER_OPTIONS } from "../transfer/transfer-options.ts";

export const syncCommand: CommandSpec = {
  name: "sync",
  summary: "make a folder match another, local ⇄ cap (:PATH), optionally --delete",
  usage: "sync [CAP] SRC DST [--delete] [--dry-run] [-v] [--transfers N]",
  description:
    "Makes the folder DST hold SRC's files, one side local and the other remote (:PATH, : for the cap's root),\n" +
    "transferring only files whose size or hash differ (see `capvault cp --help`): a second sync moves nothing.\n" +
    "With --delete, files in DST that SRC lacks are deleted afterwards, only inside DST, and only when every\n" +
    "listing was read to its last page and nothing else failed. Local symlinks are never followed or deleted.\n" +
    "Run with --dry-run first to see what it would do.",
  options: {
    delete: { type: "boolean", help: "delete files in DST that SRC does not have" },
    ...FOLDER_OPTIONS,
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "sync");
    const [source, destination] = positionalArgs(rest, { required: ["SRC", "DST"] }, "sync");
    const ends = endpoints(source, destination, "sync");
    await runFolderTransfer(input, cap, { ...ends, deleteExtra: input.values.delete === true, command: "sync" });
  },
};
