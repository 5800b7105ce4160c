import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { formatEntry } from "../human-format.ts";
import { jsonText } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";
import { remotePathArg } from "../remote-path.ts";

export const lsCommand: CommandSpec = {
  name: "ls",
  summary: "list a folder (all pages)",
  usage: "ls [CAP] [PATH] [-l]",
  description:
    "Lists the entries of PATH (default: the cap's root; . and / also mean it), sorted by name, folders with a trailing /.\n" +
    '--json prints {"entries": [{name, type, size?, etag?, modified?}, …]}.',
  options: {
    long: { type: "boolean", short: "l", help: "show size and modification time" },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "ls");
    const [pathArg = ""] = positionalArgs(rest, { required: [], optional: ["PATH"] }, "ls");
    const path = remotePathArg(pathArg);
    const out = input.io.stdout;
    // Streamed page by page so a folder of a million names never sits in memory.
    let first = true;
    if (input.json) await writeOut(out, '{\n  "entries": [');
    for await (const entry of cap.list(path)) {
      if (input.json) {
        await writeOut(out, `${first ? "\n" : ",\n"}    ${jsonText(entry)}`);
      } else {
        await writeOut(out, formatEntry(entry, input.values.long === true));
      }
      first = false;
    }
    if (input.json) await writeOut(out, `${first ? "" : "\n  "}]\n}\n`);
  },
};
