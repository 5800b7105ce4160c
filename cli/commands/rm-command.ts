import { CapError, isCapError } from "../../clients/typescript/cap-error.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { capFromInput } from "../cap-source.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";

export const rmCommand: CommandSpec = {
  name: "rm",
  summary: "delete a file, or an empty folder with -d",
  usage: "rm [CAP] PATH [-d]",
  description:
    "Deletes the file at PATH; its folder stays. With -d, removes the empty folder PATH instead\n" +
    "(as rmdir); a folder that holds anything is a conflict either way.",
  options: {
    dir: { type: "boolean", short: "d", help: "remove an empty folder instead of a file" },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "rm");
    const [path] = positionalArgs(rest, { required: ["PATH"] }, "rm");
    if (input.values.dir === true) {
      await cap.removeFolder(path);
      if (input.json) await printJson(input.io, { removed: path });
      return;
    }
    try {
      await cap.delete(path);
    } catch (error) {
      // A bare conflict does not say why: rm takes files, and a folder is removed, once empty, by rm -d.
      if (isCapError(error) && error.code === "conflict" && (await isFolder(cap, path)))
        throw new CapError(
          "conflict",
          error.status,
          `${error.message}; rm deletes files, and ${path} is a folder: rm -d removes it once empty; capvault tree ${path} shows what it holds`,
        );
      throw error;
    }
    if (input.json) await printJson(input.io, { deleted: path });
  },
};

async function isFolder(cap: FsCap, path: string): Promise<boolean> {
  return cap.stat(path).then(
    (stat) => stat.type === "dir",
    () => false,
  );
}
