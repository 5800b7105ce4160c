import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import type { LinesPage } from "../shared/wire-types.ts";
import { yieldTurn } from "../shared/yield-turn.ts";
import { readThroughCap } from "./cap-read.ts";
import type { CapStub } from "./cap-stub.ts";
import type { Env } from "./env.ts";

/** Lines one read returns at most (Hermes' read_file reads 2,000 at a time). */
export const LINES_MAX = 2000;
/** Bytes of lines one answer holds at most; a longer window ends early, with `nextOffset` where it stopped. */
export const LINES_MAX_ANSWER_BYTES = 1024 * 1024;
/**
 * The largest file read by lines: the whole file is scanned once for its
 * line count, so this bounds the work of one request (see docs/benchmarks.md).
 */
export const LINES_MAX_FILE_BYTES = 16 * 1024 * 1024;

const NEWLINE = 10;

/** `offset` (default 1) and `limit` (default {@link LINES_MAX}) as given in a query, or `linesRange`. */
export function parseLineWindow(
  rawOffset: string | null,
  rawLimit: string | null,
): Result<{ offset: number; limit: number }> {
  const int = (raw: string | null, fallback: number) =>
    raw === null ? fallback : /^[0-9]{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  const offset = int(rawOffset, 1);
  const limit = int(rawLimit, LINES_MAX);
  if (!(offset >= 1) || !(limit >= 1 && limit <= LINES_MAX)) return refuse("linesRange", { max: LINES_MAX });
  return ok({ offset, limit });
}

/**
 * Reads lines `offset` to `offset + limit - 1` of a text file through the
 * cap (the `read` right, as GET /file). Lines are split on the byte `\n`,
 * which never occurs inside a UTF-8 sequence, and the window is decoded
 * strictly: bytes that are not UTF-8 are `notText`. An offset past the last
 * line (other than 1 on an empty file) is `range_not_satisfiable`.
 */
export async function readLines(
  cap: CapStub,
  env: Env,
  rawPath: string | null,
  window: { offset: number; limit: number },
  // Tests pass a smaller bound: the workers pool's largest file is 1 MiB.
  maxAnswerBytes = LINES_MAX_ANSWER_BYTES,
): Promise<Result<LinesPage>> {
  const read = await readThroughCap(cap, env, rawPath, {});
  if (!read.ok) return read;
  if (read.value.status !== "body") return refuse("unavailable");
  return linesOf(read.value.meta.size, read.value.body, window, maxAnswerBytes);
}

/** {@link readLines} on a file's bytes already granted: its size and its body, which this consumes or cancels. */
export async function linesOf(
  size: number,
  body: ReadableStream<Uint8Array>,
  window: { offset: number; limit: number },
  maxAnswerBytes = LINES_MAX_ANSWER_BYTES,
): Promise<Result<LinesPage>> {
  if (size > LINES_MAX_FILE_BYTES) {
    await body.cancel().catch(() => undefined);
    return refuse("linesFileTooLarge", { limit: LINES_MAX_FILE_BYTES });
  }
  const first = window.offset;
  const last = window.offset + window.limit - 1;
  // Line numbers are 1-based; `line` is the line the next byte belongs to.
  let line = 1;
  let lastByte = -1;
  let seen = 0;
  const kept: Uint8Array[] = [];
  let keptBytes = 0;
  let cutAt: number | null = null;
  // Where the current line's bytes begin in `kept`, to drop them if the window must end before it.
  let lineChunks = 0;
  let lineBytes = 0;
  /** Keeps a piece of line `line`; false when that line alone is past the bound. */
  const keep = (segment: Uint8Array): boolean => {
    if (keptBytes + segment.byteLength <= maxAnswerBytes) {
      kept.push(segment);
      keptBytes += segment.byteLength;
      return true;
    }
    if (line === first) return false;
    // This line would pass the answer's bound: the window ends before it.
    cutAt = line;
    kept.length = lineChunks;
    keptBytes = lineBytes;
    return true;
  };
  const reader = body.getReader();
  let sinceTurn = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += value.byteLength;
    // A file that grew since its size was read is not read without bound.
    if (seen > LINES_MAX_FILE_BYTES) {
      await reader.cancel().catch(() => undefined);
      return refuse("linesFileTooLarge", { limit: LINES_MAX_FILE_BYTES });
    }
    const length = value.length;
    let i = 0;
    while (i < length) {
      if (cutAt !== null || line > last) {
        // Past the window: only counted, in a plain loop (an indexOf per line costs more on short lines).
        for (; i < length; i++) if (value[i] === NEWLINE) line++;
        break;
      }
      if (line < first) {
        for (; i < length; i++) {
          if (value[i] === NEWLINE && ++line === first) {
            i++;
            break;
          }
        }
        continue;
      }
      const newline = value.indexOf(NEWLINE, i);
      const end = newline < 0 ? length : newline + 1;
      if (!keep(value.subarray(i, end))) {
        await reader.cancel().catch(() => undefined);
        return refuse("lineTooLong", { limit: maxAnswerBytes });
      }
      i = end;
      if (newline < 0) continue;
      line++;
      lineChunks = kept.length;
      lineBytes = keptBytes;
    }
    if (length > 0) lastByte = value[length - 1]!;
    // A turn every 256 KiB scanned: other requests wait for one step of the scan, not all of it.
    sinceTurn += length;
    if (sinceTurn >= 256 * 1024) {
      sinceTurn = 0;
      await yieldTurn();
    }
  }
  const totalLines = seen === 0 ? 0 : lastByte === NEWLINE ? line - 1 : line;
  if (first > Math.max(totalLines, 1)) return refuse("rangeNotSatisfiable");
  const text = decodeUtf8Strict(concat(kept, keptBytes));
  if (text === null) return refuse("notText");
  const lines = text === "" ? [] : text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const end = first + lines.length - 1;
  const nextOffset = cutAt ?? (end < totalLines ? end + 1 : null);
  return ok({ lines, offset: first, totalLines, nextOffset, size });
}

function concat(chunks: readonly Uint8Array[], length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
