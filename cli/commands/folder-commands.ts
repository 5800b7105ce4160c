import { capFromInput } from "../cap-source.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";

export const mkdirCommand: CommandSpec = {
  name: "mkdir",
  summary: "make a folder",
  usage: "mkdir [CAP] PATH",
  description:
    "Makes the folder PATH, and any missing above it (needs write). It stays while empty;\n" +
    "an existing folder is success, a file at PATH or above it is a conflict.",
  options: {},
  async run(input) {
    const { cap, rest } = capFromInput(input, "mkdir");
    const [path] = positionalArgs(rest, { required: ["PATH"] }, "mkdir");
    await cap.makeFolder(path);
    if (input.json) await printJson(input.io, { made: path });
  },
};

export const rmdirCommand: CommandSpec = {
  name: "rmdir",
  summary: "remove an empty folder",
  usage: "rmdir [CAP] PATH",
  description:
    "Removes the folder PATH (needs delete); the same as rm -d. A folder that holds anything\n" +
    "is a conflict, and the cap's own root cannot be removed.",
  options: {},
  async run(input) {
    const { cap, rest } = capFromInput(input, "rmdir");
    const [path] = positionalArgs(rest, { required: ["PATH"] }, "rmdir");
    await cap.removeFolder(path);
    if (input.json) await printJson(input.io, { removed: path });
  },
};
