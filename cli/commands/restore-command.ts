import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { formatBytes } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";
import { terminalSafe } from "../terminal-safe.ts";

export const restoreCommand: CommandSpec = {
  name: "restore",
  summary: "write a version's bytes back to its file, as a new version",
  usage: "restore [CAP] VERSION_ID",
  description:
    "Writes the bytes of version VERSION_ID (from `capvault versions`) back to its file, as a new\n" +
    "version: a deleted file comes back, a changed one gets its old content. The current content stays\n" +
    "in the history, so a restore can itself be undone. Needs the read and write rights.",
  options: {},
  async run(input) {
    const { cap, rest } = capFromInput(input, "restore");
    const [id] = positionalArgs(rest, { required: ["VERSION_ID"] }, "restore");
    const { path, size, etag, sha256 } = await cap.restore(id);
    if (input.json) await printJson(input.io, { restored: id, path, size, etag, sha256 });
    else
      await writeOut(
        input.io.stdout,
        `restored ${terminalSafe(path ?? "?")} from version ${terminalSafe(id)} (${formatBytes(size)}, etag ${terminalSafe(etag)})\n`,
      );
  },
};
