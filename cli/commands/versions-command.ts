import type { Version } from "../../clients/typescript/index.ts";
import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs, positiveIntOption } from "../option-values.ts";
import { formatVersions } from "../version-format.ts";

/** The vault's largest page of versions. */
const PAGE = 100;

export const versionsCommand: CommandSpec = {
  name: "versions",
  summary: "list a file's versions, newest first (also of a deleted file)",
  usage: "versions [CAP] PATH [--limit N]",
  description:
    "Lists the versions of the file at PATH, newest first: id, operation (created, modified, deleted,\n" +
    "moved), time (UTC), size, the start of its SHA-256, and the id of the cap that made it; `redacted`\n" +
    "when its bytes are gone. A deleted file keeps its history. Needs the read right.\n" +
    "Bring one back with `capvault restore ID`; print its bytes with `capvault cat --version ID`.",
  options: {
    limit: { type: "string", value: "N", help: "show at most the N newest versions (default: all that are kept)" },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "versions");
    const [path] = positionalArgs(rest, { required: ["PATH"] }, "versions");
    const limit = positiveIntOption("limit", input.values.limit, "versions");
    const versions: Version[] = [];
    let cursor: string | null = null;
    // Bounded by the root's keepVersions (at most 10,000 per path): at most 100 pages.
    do {
      const want = limit === undefined ? PAGE : Math.min(PAGE, limit - versions.length);
      const page = await cap.versions(path, { cursor, limit: want });
      versions.push(...page.versions);
      cursor = page.cursor;
    } while (cursor !== null && (limit === undefined || versions.length < limit));
    if (input.json) await printJson(input.io, { path, versions });
    else await writeOut(input.io.stdout, formatVersions(path, versions));
  },
};
