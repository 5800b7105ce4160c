import path from "node:path";
import { Readable } from "node:stream";
import { capFromInput } from "../cap-source.ts";
import { type CliIo, writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { formatWrite } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs, stringOption } from "../option-values.ts";
import { namesFolder, remotePathArg } from "../remote-path.ts";
import { collectBytes } from "../transfer/byte-pump.ts";
import { guessContentType } from "../transfer/content-type-guess.ts";
import { runFolderTransfer } from "../transfer/folder-transfer.ts";
import { checkLocalFile } from "../transfer/local-source.ts";
import { progressStream } from "../transfer/progress-bar.ts";
import { remoteFileTarget, remoteFolderTarget } from "../transfer/remote-target.ts";
import { FOLDER_OPTIONS, RECURSIVE_OPTION, refuseFolderOptions } from "../transfer/transfer-options.ts";
import { uploadFile } from "../transfer/upload-file.ts";
import { UsageError } from "../usage-error.ts";

export const putCommand: CommandSpec = {
  name: "put",
  summary: "upload a file (or stdin, or a folder with -r)",
  usage: "put [CAP] LOCAL|- [REMOTE] [-r] [--content-type TYPE] [--if-match ETAG] [--if-none-match ETAG|*] [-n]",
  description:
    "Uploads the local file LOCAL, as sftp's put does. REMOTE defaults to LOCAL's name in the cap's root;\n" +
    "a REMOTE ending in / (or ., /), or an existing remote folder, receives LOCAL's name inside it.\n" +
    "LOCAL - reads stdin (REMOTE required); piped stdin is read fully first (the vault needs the length).\n" +
    "With -r, LOCAL is a folder and its contents go into REMOTE (default: LOCAL's name; REMOTE/ → REMOTE/NAME),\n" +
    "skipping files whose size and hash already match (see `capvault cp --help`).\n" +
    "The content type defaults to a guess from the name. Shows a progress bar on a terminal.",
  options: {
    recursive: RECURSIVE_OPTION,
    ...FOLDER_OPTIONS,
    "content-type": { type: "string", value: "TYPE", help: "content type to store (default: guessed from the name)" },
    "if-match": { type: "string", value: "ETAG", help: "write only if the current etag is ETAG" },
    "if-none-match": { type: "string", value: "ETAG|*", help: "write only if nothing (*) or not ETAG is there" },
    "no-clobber": {
      type: "boolean",
      short: "n",
      help: "write only if nothing exists at REMOTE (same as --if-none-match '*')",
    },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "put");
    const [local, remote] = positionalArgs(rest, { required: ["LOCAL"], optional: ["REMOTE"] }, "put");
    const name = path.basename(path.resolve(local));
    if (input.values.recursive === true) {
      if (local === "-") throw new UsageError("put -r takes a folder, not stdin", "put");
      const single = ["content-type", "if-match", "if-none-match", "no-clobber"].find(
        (o) => input.values[o] !== undefined,
      );
      if (single) throw new UsageError(`--${single} applies to one file, not to put -r`, "put");
      const target = remoteFolderTarget(remote, name);
      return runFolderTransfer(input, cap, {
        direction: "up",
        local,
        remote: target,
        deleteExtra: false,
        command: "put",
      });
    }
    refuseFolderOptions(input.values, "put");
    const ifNoneMatch = input.values["no-clobber"] === true ? "*" : stringOption(input.values["if-none-match"]);
    if (input.values["no-clobber"] === true && input.values["if-none-match"] !== undefined) {
      throw new UsageError("--no-clobber and --if-none-match are the same header; give one", "put");
    }
    const options = {
      contentType: stringOption(input.values["content-type"]),
      ifMatch: stringOption(input.values["if-match"]),
      ifNoneMatch,
    };
    let target: string;
    let result: Awaited<ReturnType<typeof uploadFile>>;
    if (local === "-") {
      if (remote === undefined || namesFolder(remotePathArg(remote)))
        throw new UsageError("put - (stdin) needs a REMOTE file path", "put");
      target = remote;
      result = await uploadStdin(input.io, cap, target, options);
    } else {
      await checkLocalFile(local, "put");
      target = await remoteFileTarget(cap, remote, name);
      result = await uploadFile(cap, local, target, {
        ...options,
        through: (size) => progressStream(input.io, target, size),
      });
    }
    if (input.json) await printJson(input.io, { path: target, ...result });
    else await writeOut(input.io.stdout, formatWrite(target, result));
  },
};

type CapLike = Parameters<typeof uploadFile>[0];

async function uploadStdin(
  io: CliIo,
  cap: CapLike,
  target: string,
  options: { contentType?: string | undefined; ifMatch?: string | undefined; ifNoneMatch?: string | undefined },
) {
  const size = io.stdinFileSize();
  let body: ReadableStream<Uint8Array>;
  let length: number;
  if (size !== null) {
    body = Readable.toWeb(io.stdin) as unknown as ReadableStream<Uint8Array>;
    length = size;
  } else {
    const bytes = await collectBytes(io.stdin);
    body = new Blob([bytes]).stream() as ReadableStream<Uint8Array>;
    length = bytes.byteLength;
  }
  const bar = progressStream(io, target, length);
  return cap.write(target, bar ? body.pipeThrough(bar) : body, {
    length,
    contentType: options.contentType ?? guessContentType(target),
    ifMatch: options.ifMatch,
    ifNoneMatch: options.ifNoneMatch,
  });
}
