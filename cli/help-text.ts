import { CAP_FILE_OPTION, takesCap } from "./cap-source.ts";
import type { CommandSpec, OptionSpec } from "./command-spec.ts";
import { COMMANDS } from "./command-table.ts";

const JSON_OPTION: OptionSpec = { type: "boolean", help: "print one JSON document on stdout (for scripts)" };
const HELP_OPTION: OptionSpec = { type: "boolean", short: "h", help: "show this help" };

export function topLevelHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "capvault: a capability vault for files. A cap URL is a secret that grants rights to one folder.",
    "",
    "Usage: capvault <command> [CAP] [ARGS…] [--json]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "The cap comes from $CAPVAULT_CAP or --cap-file PATH (preferred), or the first argument when it is a",
    "cap URL (works, but arguments are visible to other users in `ps`; the CLI warns).",
    "Paths are relative to the cap's root; ., ./ and / name the root itself. In cp and sync the remote side",
    "is written :PATH (like rclone's remote:path): capvault sync ./notes :notes, capvault cp :a.md .",
    "TTLs take durations: 3600 (seconds), 90s, 30m, 1h, 7d, 2w, 1h30m.",
    "Admin commands use $CAPVAULT_URL (default http://127.0.0.1:8787) and $CAPVAULT_ADMIN_TOKEN.",
    "",
    "Exit codes: 0 ok, 1 refused by the vault (stderr: capvault: <code>: <message>),",
    "            2 usage error, 3 vault unreachable or unavailable, 130 watch stopped with Ctrl-C.",
    "",
    "Run `capvault <command> --help` for a command's arguments.",
    "",
  ].join("\n");
}

export function commandHelp(command: CommandSpec): string {
  const all: [string, OptionSpec][] = [
    ...Object.entries(command.options),
    ...(takesCap(command) ? ([["cap-file", CAP_FILE_OPTION]] as [string, OptionSpec][]) : []),
    ...(command.passThrough
      ? []
      : ([
          ["json", JSON_OPTION],
          ["help", HELP_OPTION],
        ] as [string, OptionSpec][])),
  ];
  const rows = all.map(([name, spec]) => ({
    flag: `${spec.short ? `-${spec.short}, ` : "    "}--${name}${spec.value ? ` ${spec.value}` : ""}`,
    help: spec.help,
  }));
  const width = Math.max(...rows.map((r) => r.flag.length));
  return [
    `Usage: capvault ${command.usage}`,
    "",
    command.description,
    "",
    ...(all.length === 0 ? [] : ["Options:", ...rows.map((r) => `  ${r.flag.padEnd(width)}  ${r.help}`), ""]),
  ].join("\n");
}
