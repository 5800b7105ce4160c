import { parseArgs } from "node:util";
import { isCapError } from "../clients/typescript/cap-error.ts";
import { RELEASE, STATE_FORMAT } from "../shared/state-format.ts";
import { CAP_FILE_OPTION, takesCap } from "./cap-source.ts";
import type { CliIo } from "./cli-io.ts";
import type { CommandInput, CommandSpec } from "./command-spec.ts";
import { COMMANDS, findCommand } from "./command-table.ts";
import { EXIT } from "./exit-codes.ts";
import { commandHelp, topLevelHelp } from "./help-text.ts";
import { holderFromInput, KEY_FILE_OPTION } from "./holder-key-file.ts";
import { Interrupted } from "./interrupted.ts";
import { jsonText } from "./json-output.ts";
import { ReportedFailure } from "./reported-failure.ts";
import { terminalSafe } from "./terminal-safe.ts";
import { LocalRefusal } from "./transfer/local-refusal.ts";
import { UsageError } from "./usage-error.ts";

/**
 * Runs one CLI invocation and returns its exit code. Never calls
 * `process.exit`, so it can run in-process under test and so `serve` keeps
 * the process alive for as long as the launcher does.
 *
 * @example
 * process.exitCode = await runCli(["ls", "notes", "--json"], processIo());
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (name === undefined) {
    io.stderr.write(topLevelHelp());
    return EXIT.usage;
  }
  if (name === "--version" || name === "-V") {
    // The release and the newest state format this build reads and writes (docs/state-format.md).
    io.stdout.write(
      args.includes("--json")
        ? `${jsonText({ release: RELEASE, stateFormat: STATE_FORMAT })}\n`
        : `capvault ${RELEASE} (state format ${STATE_FORMAT})\n`,
    );
    return EXIT.ok;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = name === "help" ? args[0] : undefined;
    const command = topic === undefined ? undefined : findCommand(topic);
    if (topic !== undefined && command === undefined) return usageFailure(io, new UsageError(unknownCommand(topic)));
    io.stdout.write(command ? commandHelp(command) : topLevelHelp());
    return EXIT.ok;
  }
  const command = findCommand(name);
  if (command === undefined) return usageFailure(io, new UsageError(unknownCommand(name)));
  // A pass-through command (serve) answers its own --help with the flags it really takes.
  if (!command.passThrough && wantsHelp(args)) {
    io.stdout.write(commandHelp(command));
    return EXIT.ok;
  }

  let json = false;
  try {
    if (command.passThrough) return await command.runRaw(args);
    const input = parseCommandArgs(command, args, io);
    json = input.json;
    const holder = await holderFromInput(input, command.name);
    if (holder) input.holder = holder;
    await command.run(input);
    return EXIT.ok;
  } catch (error) {
    return reportFailure(io, error, json);
  }
}

function parseCommandArgs(command: CommandSpec, args: string[], io: CliIo): CommandInput {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  };
  const specs = takesCap(command)
    ? { ...command.options, "cap-file": CAP_FILE_OPTION, "key-file": KEY_FILE_OPTION }
    : { ...command.options, "key-file": KEY_FILE_OPTION };
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = spec.short ? { type: spec.type, short: spec.short } : { type: spec.type };
  }
  try {
    const { values, positionals } = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { io, positionals, values: values as CommandInput["values"], json: values.json === true };
  } catch (error) {
    // node:util parseArgs errors are worded for people ("Unknown option '--x'") and carry an ERR_PARSE_ARGS_* code.
    if ((error as NodeJS.ErrnoException).code?.startsWith("ERR_PARSE_ARGS")) {
      throw new UsageError((error as Error).message, command.name);
    }
    throw error;
  }
}

/** `--help` / `-h` anywhere before a `--` separator. */
function wantsHelp(args: readonly string[]): boolean {
  const end = args.indexOf("--");
  return (end === -1 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

function unknownCommand(name: string): string {
  // Someone typing `capvault <cap-url> ls` must not get their secret echoed into a log.
  if (/^https?:\/\//i.test(name)) return "the command comes first: capvault <command> [CAP] …";
  const near = nearestCommand(name);
  return `unknown command '${redactCapUrls(name)}'${near ? `; did you mean '${near}'?` : ""}`;
}

/** The command a typo most likely meant: at most two edits away (one for short names). */
function nearestCommand(name: string): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const command of COMMANDS) {
    const distance = editDistance(name.toLowerCase(), command.name);
    if (distance <= (command.name.length <= 3 ? 1 : 2) && (best === undefined || distance < best.distance))
      best = { name: command.name, distance };
  }
  return best?.name;
}

/** Edits (insert, delete, replace, swap of neighbours) between two words; 3 stands for "far". */
function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!;
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
    }
  return d[a.length]![b.length]!;
}

function usageFailure(io: CliIo, error: UsageError): number {
  const hint = error.command ? `capvault ${error.command} --help` : "capvault --help";
  io.stderr.write(`capvault: ${terminalSafe(redactCapUrls(error.message))}\nTry '${hint}'.\n`);
  return EXIT.usage;
}

function reportFailure(io: CliIo, error: unknown, json: boolean): number {
  // A progress bar may own the current terminal line; start the message on a clean one.
  if (io.stderr.isTTY) io.stderr.write("\r\u001b[K");
  if (error instanceof UsageError) return usageFailure(io, error);
  if (error instanceof ReportedFailure) return EXIT.refused;
  if (error instanceof Interrupted) return EXIT.interrupted;
  if (error instanceof LocalRefusal) {
    io.stderr.write(`capvault: ${error.code}: ${terminalSafe(error.message)}\n`);
    if (json) io.stdout.write(`${jsonText({ error: { code: error.code, message: error.message } })}\n`);
    return EXIT.refused;
  }
  if (isCapError(error)) {
    const message = redactCapUrls(error.message) + settingHint(error.code, error.message);
    // The message (and, from a hostile server, even the code) is the vault's text: shown escaped.
    io.stderr.write(`capvault: ${terminalSafe(error.code)}: ${terminalSafe(message)}\n`);
    // One line: after `watch --json`'s events it is the stream's last line, still one JSON document per line.
    if (json) io.stdout.write(`${jsonText({ error: { code: error.code, message, status: error.status } })}\n`);
    return error.code === "unavailable" ? EXIT.unavailable : EXIT.refused;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.stderr.write(`capvault: internal error: ${terminalSafe(redactCapUrls(message))}\n`);
  return EXIT.refused;
}

/** Belt and braces: whatever a message says, a cap token never reaches the terminal or a log. */
export function redactCapUrls(text: string): string {
  // Tokens are base32; closing brackets and placeholders such as `<token>` stay, so the text reads whole.
  return text.replace(/\/object\/[^\s/'"`?#()<>[\]{},;]+/g, "/object/…");
}

/** A file-size refusal names the setting that decides it, which lives where the vault runs. */
function settingHint(code: string, message: string): string {
  return code === "too_large" && /^files are limited to \d+ bytes$/.test(message)
    ? " (set by CAPVAULT_MAX_FILE_BYTES, or --max-file-bytes, where the vault runs)"
    : "";
}
