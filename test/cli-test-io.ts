import { PassThrough, Readable } from "node:stream";
import type { CliIo } from "../cli/cli-io.ts";
import { runCli } from "../cli/run-cli.ts";
import type { FetchLike } from "../clients/typescript/types.ts";

export interface CliRun {
  code: number;
  stdout: Buffer;
  stderr: string;
  /** stdout as UTF-8. */
  out: string;
}

export interface InProcessOptions {
  env?: Record<string, string | undefined>;
  stdin?: Uint8Array | string;
  fetch?: FetchLike;
  /** Pretend stderr is a terminal (progress bars). */
  tty?: boolean;
}

/**
 * Runs the CLI in this process with captured streams: the same code path as
 * the real binary minus process start-up, so most CLI tests stay fast. The
 * binary itself is exercised by spawning in test/node/cli.node.test.ts.
 */
export async function runInProcess(argv: string[], options: InProcessOptions = {}): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough() as PassThrough & { isTTY?: boolean };
  if (options.tty) stderr.isTTY = true;
  const outChunks: Buffer[] = [];
  const errChunks: Buffer[] = [];
  stdout.on("data", (c: Buffer) => outChunks.push(c));
  stderr.on("data", (c: Buffer) => errChunks.push(c));
  const io: CliIo = {
    stdout,
    stderr,
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    env: options.env ?? {},
    stdinFileSize: () => null,
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };
  const code = await runCli(argv, io);
  const stdoutBytes = Buffer.concat(outChunks);
  return {
    code,
    stdout: stdoutBytes,
    out: stdoutBytes.toString("utf8"),
    stderr: Buffer.concat(errChunks).toString("utf8"),
  };
}
