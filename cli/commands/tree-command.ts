import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs, positiveIntOption } from "../option-values.ts";
import { remotePathArg } from "../remote-path.ts";
import { ReportedFailure } from "../reported-failure.ts";
import { terminalSafe as safe } from "../terminal-safe.ts";
import { Limiter } from "../transfer/limiter.ts";
import { walkRemote } from "../transfer/remote-walk.ts";
import { buildTree, formatTree } from "../tree-format.ts";

export const treeCommand: CommandSpec = {
  name: "tree",
  summary: "show a folder and everything below it",
  usage: "tree [CAP] [PATH] [-L DEPTH] [-l]",
  description:
    "Draws PATH (default: the cap's root; . and / also mean it) and all folders below it, listing 8 folders\n" +
    "at once. --json prints {entries: [{name, type, size?, etag?, children?}], issues: [{path, code, message}]},\n" +
    "folders nesting their children.",
  options: {
    level: { type: "string", short: "L", value: "DEPTH", help: "descend at most DEPTH folders" },
    long: { type: "boolean", short: "l", help: "show file sizes" },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "tree");
    const [pathArg = ""] = positionalArgs(rest, { required: [], optional: ["PATH"] }, "tree");
    const path = remotePathArg(pathArg);
    const maxDepth = positiveIntOption("level", input.values.level, "tree");
    const walk = await walkRemote(cap, path, new Limiter(8), maxDepth === undefined ? {} : { maxDepth });
    const entries = buildTree(walk);
    if (input.json) await printJson(input.io, { entries, issues: walk.issues });
    else await writeOut(input.io.stdout, formatTree(path === "" ? "." : path, entries, input.values.long === true));
    for (const issue of walk.issues) {
      await writeOut(input.io.stderr, `capvault: ${safe(issue.path)}: ${safe(issue.code)}: ${safe(issue.message)}\n`);
    }
    if (walk.issues.length > 0) throw new ReportedFailure();
  },
};
