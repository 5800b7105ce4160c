import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { positionalArgs, stringOption } from "../option-values.ts";
import { pumpToWritable } from "../transfer/byte-pump.ts";
import { progressStream } from "../transfer/progress-bar.ts";
import { UsageError } from "../usage-error.ts";

export const catCommand: CommandSpec = {
  name: "cat",
  summary: "write a file's bytes to stdout",
  usage: "cat [CAP] PATH\n       capvault cat [CAP] --version ID",
  description:
    "Streams the file at PATH to stdout, byte for byte (binary-safe, never buffered whole).\n" +
    "Shows a progress bar on stderr for files over 4 MiB when stderr is a terminal.\n" +
    "With --version ID: the bytes of that version instead (ids from `capvault versions`), read whole.",
  options: {
    version: { type: "string", value: "ID", help: "write this version's bytes instead of a file's" },
  },
  async run(input) {
    if (input.json) throw new UsageError("cat writes the file's bytes; --json does not apply (use stat --json)", "cat");
    const { cap, rest } = capFromInput(input, "cat");
    const version = stringOption(input.values.version);
    if (version !== undefined) {
      positionalArgs(rest, { required: [] }, "cat");
      await writeOut(input.io.stdout, await cap.readVersion(version));
      return;
    }
    const [path] = positionalArgs(rest, { required: ["PATH"] }, "cat");
    const file = await cap.readStream(path);
    if (file.notModified) return;
    const bar = progressStream(input.io, path, file.meta.length);
    await pumpToWritable(bar ? file.body.pipeThrough(bar) : file.body, input.io.stdout);
  },
};
