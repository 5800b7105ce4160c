import { capFromInput } from "../cap-source.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";

export const mvCommand: CommandSpec = {
  name: "mv",
  summary: "move or rename a file",
  usage: "mv [CAP] FROM TO [--overwrite]",
  description:
    "Moves the file FROM to TO inside the cap (needs write and delete).\n" +
    "An existing TO is a conflict unless --overwrite is given.",
  options: {
    overwrite: { type: "boolean", short: "f", help: "replace an existing destination file" },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "mv");
    const [from, to] = positionalArgs(rest, { required: ["FROM", "TO"] }, "mv");
    await cap.move(from, to, { overwrite: input.values.overwrite === true });
    if (input.json) await printJson(input.io, { moved: { from, to } });
  },
};
