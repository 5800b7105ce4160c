import { pumpToWritable } from "../byte-pump.ts";
import { capFromInput } from "../cap-source.ts";
import type { CommandSpec } from "../command-spec.ts";
import { positionalArgs } from "../option-values.ts";
import { progressStream } from "../progress-bar.ts";
import { UsageError } from "../usage-error.ts";

export const catCommand: CommandSpec = {
  name: "cat",
  summary: "write a file's bytes to stdout",
  usage: "cat [CAP] PATH",
  description:
    "Streams the file at PATH to stdout, byte for byte (binary-safe, never buffered whole).\n" +
    "Shows a progress bar on stderr for files over 4 MiB when stderr is a terminal.",
  options: {},
  async run(input) {
    if (input.json) throw new UsageError("cat writes the file's bytes; --json does not apply (use stat --json)", "cat");
    const { cap, rest } = capFromInput(input, "cat");
    const [path] = positionalArgs(rest, { required: ["PATH"] }, "cat");
    const file = await cap.readStream(path);
    if (file.notModified) return;
    const bar = progressStream(input.io, path, file.meta.length);
    await pumpToWritable(bar ? file.body.pipeThrough(bar) : file.body, input.io.stdout);
  },
};
