import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import { collectBytes } from "../byte-pump.ts";
import { capFromInput } from "../cap-source.ts";
import { type CliIo, writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { guessContentType } from "../content-type-guess.ts";
import { formatWrite } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs, stringOption } from "../option-values.ts";
import { progressStream } from "../progress-bar.ts";
import { UsageError } from "../usage-error.ts";

interface Source {
  body: ReadableStream<Uint8Array>;
  length: number;
}

export const putCommand: CommandSpec = {
  name: "put",
  summary: "upload a file (or stdin) to a path",
  usage: "put [CAP] PATH [FILE|-] [--content-type TYPE] [--if-match ETAG] [--if-none-match ETAG|*] [-n]",
  description:
    "Creates or replaces the file at PATH with the contents of FILE, or of stdin when FILE is - or absent.\n" +
    "Files stream with their size; piped stdin is read fully first (the vault needs the length up front).\n" +
    "The content type defaults to a guess from PATH's extension. Shows a progress bar over 4 MiB on a terminal.",
  options: {
    "content-type": { type: "string", value: "TYPE", help: "content type to store (default: guessed from PATH)" },
    "if-match": { type: "string", value: "ETAG", help: "write only if the current etag is ETAG" },
    "if-none-match": { type: "string", value: "ETAG|*", help: "write only if nothing (*) or not ETAG is there" },
    "no-clobber": {
      type: "boolean",
      short: "n",
      help: "write only if nothing exists at PATH (same as --if-none-match '*')",
    },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "put");
    const [path, file] = positionalArgs(rest, { required: ["PATH"], optional: ["FILE"] }, "put");
    const ifNoneMatch = input.values["no-clobber"] === true ? "*" : stringOption(input.values["if-none-match"]);
    if (input.values["no-clobber"] === true && input.values["if-none-match"] !== undefined) {
      throw new UsageError("--no-clobber and --if-none-match are the same header; give one", "put");
    }
    if (file === undefined && (input.io.stdin as { isTTY?: boolean }).isTTY) {
      throw new UsageError("give a FILE, or pipe the content into stdin (or pass - to type it)", "put");
    }
    const source = file === undefined || file === "-" ? await stdinSource(input.io) : await fileSource(file);
    const bar = progressStream(input.io, path, source.length);
    const result = await cap.write(path, bar ? source.body.pipeThrough(bar) : source.body, {
      length: source.length,
      contentType: stringOption(input.values["content-type"]) ?? guessContentType(path),
      ifMatch: stringOption(input.values["if-match"]),
      ifNoneMatch,
    });
    if (input.json) await printJson(input.io, result);
    else await writeOut(input.io.stdout, formatWrite(path, result));
  },
};

async function fileSource(file: string): Promise<Source> {
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new UsageError(`${file} is not a regular file`, "put");
    size = info.size;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`, "put");
  }
  return { body: webStream(createReadStream(file)), length: size };
}

async function stdinSource(io: CliIo): Promise<Source> {
  const size = io.stdinFileSize();
  if (size !== null) return { body: webStream(io.stdin), length: size };
  const bytes = await collectBytes(io.stdin);
  return { body: new Blob([bytes]).stream() as ReadableStream<Uint8Array>, length: bytes.byteLength };
}

function webStream(stream: Readable): ReadableStream<Uint8Array> {
  return Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>;
}
