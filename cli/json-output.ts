import { type CliIo, writeOut } from "./cli-io.ts";

/**
 * Characters JSON.stringify leaves raw that a terminal acts on: DEL and the C1
 * controls (U+009B is CSI, an escape sequence's start on its own), the line
 * and paragraph separators, and bidi marks, overrides and isolates (which make
 * `evil.exe` display as `exe.live`). JSON escapes only C0, `"` and `\`.
 * Outside strings JSON text is ASCII, so these are always inside a string,
 * where `\uXXXX` means the same character: the document parses to the same
 * value, and a terminal shows six harmless characters.
 */
const TERMINAL_ACTIVE = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * JSON text safe to print to a terminal, for `--json` output: the value is
 * attacker-chosen in part (file names, labels, error messages).
 *
 * @example
 * jsonText({ name: "a\u202eb" }) // '{"name":"a\\u202eb"}'
 */
export function jsonText(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(
    TERMINAL_ACTIVE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** `--json` output: exactly one JSON document per command on stdout. */
export async function printJson(io: CliIo, value: unknown): Promise<void> {
  await writeOut(io.stdout, `${jsonText(value, 2)}\n`);
}
