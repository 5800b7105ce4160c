import type { HolderKey } from "../clients/typescript/holder.ts";
import type { CliIo } from "./cli-io.ts";

/** One option a command accepts, in node:util parseArgs terms. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  /** Shown in `--help`, e.g. "--rights LIST  rights for the child (read,list,…)". */
  help: string;
  /** Value placeholder in help, for string options. */
  value?: string;
}

/** What a command receives once its arguments parsed. */
export interface CommandInput {
  io: CliIo;
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
  /** `--json`: one JSON document on stdout instead of human text. */
  json: boolean;
  /** The holder key from --key-file / CAPVAULT_KEY_FILE: every cap request is signed with it (holder-bound caps). */
  holder?: HolderKey;
}

/** What every command has: its name, help text and options. */
interface CommandBase {
  name: string;
  /** One line for the top-level help. */
  summary: string;
  /** Usage line(s) without the leading `capvault `. */
  usage: string;
  /** Longer explanation shown by `capvault <name> --help`. */
  description: string;
  options: Record<string, OptionSpec>;
}

/**
 * A command the runner parses for (options, `--json`, `--help`). It reports
 * failure by throwing a UsageError or CapError, which the runner maps to an
 * exit code; returning means success.
 */
export interface ParsedCommand extends CommandBase {
  passThrough?: false;
  run(input: CommandInput): Promise<void>;
}

/** A command that takes its argv untouched and answers its own `--help` (`serve`). */
export interface PassThroughCommand extends CommandBase {
  passThrough: true;
  runRaw(args: string[]): Promise<number>;
}

/** A CLI command: one module under `cli/commands/`, listed in `command-table.ts`. */
export type CommandSpec = ParsedCommand | PassThroughCommand;
