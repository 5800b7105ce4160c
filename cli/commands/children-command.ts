import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { formatChildren } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";

export const childrenCommand: CommandSpec = {
  name: "children",
  summary: "list the caps minted from this one",
  usage: "children [CAP]",
  description:
    "Lists the direct children of a cap: id, rights, expiry, path (relative to this cap) and label.\n" +
    "Needs the subdir right. Revoke one with `capvault revoke [CAP] --child ID`.",
  options: {},
  async run(input) {
    const { cap, rest } = capFromInput(input, "children");
    positionalArgs(rest, { required: [] }, "children");
    const children = await cap.children();
    if (input.json) await printJson(input.io, { children });
    else await writeOut(input.io.stdout, formatChildren(children));
  },
};
