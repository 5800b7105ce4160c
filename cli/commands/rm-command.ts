import { CapError, isCapError } from "../../clients/typescript/cap-error.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { capFromInput } from "../cap-source.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";

export const rmCommand: CommandSpec = {
  name: "rm",
  summary: "delete a file",
  usage: "rm [CAP] PATH",
  description: "Deletes the file at PATH. Folders disappear with their last file; deleting a folder is a conflict.",
  options: {},
  async run(input) {
    const { cap, rest } = capFromInput(input, "rm");
    const [path] = positionalArgs(rest, { required: ["PATH"] }, "rm");
    try {
      await cap.delete(path);
    } catch (error) {
      // A bare conflict does not say why: rm takes files, and a folder goes with its last file.
      if (isCapError(error) && error.code === "conflict" && (await isFolder(cap, path)))
        throw new CapError(
          "conflict",
          error.status,
          `${error.message}; rm deletes files, and ${path} is a folder: delete its files (capvault tree ${path})`,
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
