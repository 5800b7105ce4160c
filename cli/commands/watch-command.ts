import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { Interrupted } from "../interrupted.ts";
import { jsonText } from "../json-output.ts";
import { positionalArgs, stringOption } from "../option-values.ts";
import { joinRemote, remotePathArg } from "../remote-path.ts";
import { formatChange } from "../version-format.ts";

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

export const watchCommand: CommandSpec = {
  name: "watch",
  summary: "print the changes inside the cap (or PATH) as they happen",
  usage: "watch [CAP] [PATH] [--since ID]",
  description:
    "Follows the vault's change stream: one line per change (version, operation, path, size), paths\n" +
    "relative to the cap's root, only those at or below PATH when it is given. --since ID first prints\n" +
    "the changes after version ID (the last one printed before, to miss nothing across a restart).\n" +
    "Runs until Ctrl-C (exit 130), or until the cap is revoked or expires: then it prints the vault's\n" +
    "refusal and exits 1. With --json, one JSON object per line. Needs the read right.",
  options: {
    since: { type: "string", value: "ID", help: "start with the changes after this version id" },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "watch");
    const [pathArg] = positionalArgs(rest, { required: [], optional: ["PATH"] }, "watch");
    const prefix = joinRemote(remotePathArg(pathArg ?? ""), "");
    // The vault judges PATH as it judges every path (path_escapes, absolute_path, …) before a stream opens.
    if (prefix !== "") await cap.versions(prefix, { limit: 1 });
    const stop = new AbortController();
    let interrupted = false;
    let outputGone = false;
    const onSignal = () => {
      interrupted = true;
      stop.abort();
    };
    // A reader that went away (`| head -1`) ends the watch, as a closed pipe ends `tail -f`.
    const onOutputGone = () => {
      outputGone = true;
      stop.abort();
    };
    for (const signal of SIGNALS) process.once(signal, onSignal);
    input.io.stdout.once("error", onOutputGone);
    try {
      for await (const change of cap.watch({ since: stringOption(input.values.since), signal: stop.signal })) {
        if (prefix !== "" && change.path !== prefix && !change.path.startsWith(`${prefix}/`)) continue;
        await writeOut(input.io.stdout, input.json ? `${jsonText(change)}\n` : formatChange(change));
      }
    } catch (error) {
      // The write that found the reader gone fails too: that is the end of the watch, not an error.
      if (!outputGone) throw error;
    } finally {
      for (const signal of SIGNALS) process.off(signal, onSignal);
      input.io.stdout.off("error", onOutputGone);
    }
    if (interrupted) throw new Interrupted();
  },
};
