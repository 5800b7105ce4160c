import { fstatSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import type { FetchLike } from "../clients/typescript/types.ts";

/**
 * Everything a command touches outside itself, so commands run the same in a
 * real process and in-process under test (with PassThrough streams and a
 * fake environment).
 */
export interface CliIo {
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean; columns?: number };
  stdin: Readable;
  env: Readonly<Record<string, string | undefined>>;
  /** Size of stdin when it is a regular file (`< file`), so it can be streamed with a known length. */
  stdinFileSize(): number | null;
  /** Replaces the SDK's fetch (tests). */
  fetch?: FetchLike;
}

export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    stdinFileSize() {
      try {
        const stat = fstatSync(0);
        return stat.isFile() ? stat.size : null;
      } catch {
        return null;
      }
    },
  };
}

/** Writes and waits for the stream to accept more, so large outputs respect back-pressure. */
export async function writeOut(stream: Writable, chunk: string | Uint8Array): Promise<void> {
  if (stream.write(chunk)) return;
  await new Promise<void>((resolve, reject) => {
    const onDrain = () => {
      stream.off("error", onError);
      resolve();
    };
    const onError = (error: Error) => {
      stream.off("drain", onDrain);
      reject(error);
    };
    stream.once("drain", onDrain);
    stream.once("error", onError);
  });
}
