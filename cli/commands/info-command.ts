import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { formatInfo } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";

export const infoCommand: CommandSpec = {
  name: "info",
  summary: "show a cap's id, rights, label, dates and parent",
  usage: "info [CAP]",
  description: "Shows what a cap is. Needs no right; never shows the root or the token.",
  options: {},
  async run(input) {
    const { cap, rest } = capFromInput(input, "info");
    positionalArgs(rest, { required: [] }, "info");
    const info = await cap.info();
    if (input.json) await printJson(input.io, info);
    else await writeOut(input.io.stdout, formatInfo(info));
  },
};
