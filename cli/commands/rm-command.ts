import { capFromInput } from "../cap-source.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";

export const rmCommand: CommandSpec = {
  name: "rm",
  summary: "delete a file",
  usage: "rm [CAP] PATH",
  description: "Deletes the file at PATH. Folders disappear with their last file; deleting a folder is a conflict.",
  options: {},
  async run(input) {
    const { cap, rest } = capFromInput(input, "rm");
    const [path] = positionalArgs(rest, { required: ["PATH"] }, "rm");
    await cap.delete(path);
    if (input.json) await printJson(input.io, { deleted: path });
  },
};
