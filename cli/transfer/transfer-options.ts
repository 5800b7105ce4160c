import type { OptionSpec } from "../command-spec.ts";
import { UsageError } from "../usage-error.ts";

/** The options every command that can move a folder takes. */
export const RECURSIVE_OPTION: OptionSpec = { type: "boolean", short: "r", help: "a whole folder, recursively" };

export const FOLDER_OPTIONS: Record<string, OptionSpec> = {
  "dry-run": { type: "boolean", help: "show what would be transferred or deleted; change nothing" },
  transfers: { type: "string", value: "N", help: "files in flight at once (default 8, at most 32)" },
  verbose: { type: "boolean", short: "v", help: "list each file transferred or deleted" },
};

/** A single-file put, get or cp given a folder-only option: refused, so `--dry-run` never uploads for real. */
export function refuseFolderOptions(values: Record<string, unknown>, command: string): void {
  const given = Object.keys(FOLDER_OPTIONS).find((name) => values[name] !== undefined);
  if (given) throw new UsageError(`--${given} applies to folders: add -r`, command);
}
