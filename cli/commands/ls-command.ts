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
    if (input.json) {
      // Whole or nothing: a listing cut short by a failure must not leave half a document on stdout.
      const lines: string[] = [];
      for await (const entry of cap.list(path)) lines.push(`    ${jsonText(entry)}`);
      await writeOut(
        out,
        lines.length === 0 ? '{\n  "entries": []\n}\n' : `{\n  "entries": [\n${lines.join(",\n")}\n  ]\n}\n`,
      );
      return;
    }
    // Streamed page by page so a folder of a million names never sits in memory.
    for await (const entry of cap.list(path)) await writeOut(out, formatEntry(entry, input.values.long === true));
  },
};
