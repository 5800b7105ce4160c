import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";
import { terminalSafe } from "../terminal-safe.ts";

/**
 * Asks nothing, as `rm` and `revoke` ask nothing: the CLI runs in scripts and
 * agents, where a prompt would hang. What guards it is the cap: only a cap
 * with `delete` may redact, and only versions inside its subtree.
 */
export const redactCommand: CommandSpec = {
  name: "redact",
  summary: "destroy a version's bytes for good (its record stays)",
  usage: "redact [CAP] VERSION_ID",
  description:
    "Destroys the bytes of version VERSION_ID, and of every version sharing them (a move or delete\n" +
    "points at the bytes it took away), for good: for a secret written by mistake. The records stay,\n" +
    "marked redacted, with size but no SHA-256. Cannot be undone, and asks nothing. Needs the delete right.",
  options: {},
  async run(input) {
    const { cap, rest } = capFromInput(input, "redact");
    const [id] = positionalArgs(rest, { required: ["VERSION_ID"] }, "redact");
    await cap.redact(id);
    if (input.json) await printJson(input.io, { redacted: id });
    else await writeOut(input.io.stdout, `redacted version ${terminalSafe(id)}\n`);
  },
};
