import type { Readable } from "node:stream";

/** One line of stdin, or the news that a line was longer than allowed (its bytes are dropped). */
export type StdinLine = { text: string } | { tooLong: true };

/**
 * Splits a byte stream into newline-delimited lines (MCP's stdio framing),
 * holding at most `maxBytes` of one line in memory: a client that never
 * sends a newline cannot make the bridge buffer without end. A trailing `\r`
 * is dropped; blank lines are skipped.
 */
export async function* stdinLines(stream: Readable, maxBytes: number): AsyncGenerator<StdinLine> {
  let pieces: Buffer[] = [];
  let held = 0;
  let overflowing = false;
  for await (const chunk of stream) {
    let rest = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    for (let end = rest.indexOf(0x0a); end !== -1; end = rest.indexOf(0x0a)) {
      const tail = rest.subarray(0, end);
      rest = rest.subarray(end + 1);
      if (overflowing || held + tail.length > maxBytes) yield { tooLong: true };
      else {
        const line = finish([...pieces, tail]);
        if (line !== "") yield { text: line };
      }
      pieces = [];
      held = 0;
      overflowing = false;
    }
    if (overflowing) continue;
    if (held + rest.length > maxBytes) {
      overflowing = true;
      pieces = [];
      held = 0;
    } else if (rest.length > 0) {
      pieces.push(Buffer.from(rest));
      held += rest.length;
    }
  }
  if (overflowing) yield { tooLong: true };
  else if (held > 0) {
    const line = finish(pieces);
    if (line !== "") yield { text: line };
  }
}

function finish(pieces: Buffer[]): string {
  const text = Buffer.concat(pieces).toString("utf8");
  return (text.endsWith("\r") ? text.slice(0, -1) : text).trim();
}
