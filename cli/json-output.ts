import { type CliIo, writeOut } from "./cli-io.ts";

/** `--json` output: exactly one JSON document per command on stdout. */
export async function printJson(io: CliIo, value: unknown): Promise<void> {
  await writeOut(io.stdout, `${JSON.stringify(value, null, 2)}\n`);
}
