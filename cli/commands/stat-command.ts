import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { formatStat } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";
import { remotePathArg } from "../remote-path.ts";

export const statCommand: CommandSpec = {
  name: "stat",
  summary: "describe a file or folder",
  usage: "stat [CAP] [PATH]",
  description:
    "Shows type, size, etag, modification time and content type of PATH (default: the cap's root; . and / also mean it).",
  options: {},
  async run(input) {
    const { cap, rest } = capFromInput(input, "stat");
    const [pathArg = ""] = positionalArgs(rest, { required: [], optional: ["PATH"] }, "stat");
    const stat = await cap.stat(remotePathArg(pathArg));
    if (input.json) await printJson(input.io, stat);
    else await writeOut(input.io.stdout, formatStat(stat));
  },
};
