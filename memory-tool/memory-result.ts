import type { ErrorCode } from "../shared/error-codes.ts";
import type { CapFailure } from "../shared/result.ts";
import { quoteInput } from "./memory-path.ts";

/**
 * What one memory command produced: the exact string the memory tool expects
 * as its `tool_result` content, and whether it is an error (`is_error`).
 * Error texts start with `Error:` and every error carries a wire code.
 */
export type MemoryResult =
  | { text: string; isError: false; code: null }
  | { text: string; isError: true; code: ErrorCode };

export function done(text: string): MemoryResult {
  return { text, isError: false, code: null };
}

/** An error in the reference implementation's own words (from memory-refusals.ts). */
export function referenceError(failure: CapFailure): MemoryResult {
  return { text: `Error: ${failure.message}`, isError: true, code: failure.code };
}

/**
 * A refusal from the cap or the path parser: `Error: <code>: <message>`, with
 * the path the model sent quoted safely. Cap messages are fixed texts that
 * never name a root, prefix or host path.
 */
export function capError(failure: CapFailure, path?: unknown): MemoryResult {
  const where = path === undefined ? "" : ` (${quoteInput(path)})`;
  return { text: `Error: ${failure.code}: ${failure.message}${where}`, isError: true, code: failure.code };
}

// The reference pads line numbers to the width of its 999,999-line limit.
export const MAX_LINES = 999_999;
const LINE_NUMBER_WIDTH = String(MAX_LINES).length;

/** `     1\tfirst line`: the reference's numbered-line format. */
export function numberedLine(lineNumber: number, line: string): string {
  return `${String(lineNumber).padStart(LINE_NUMBER_WIDTH, " ")}\t${line}`;
}

/**
 * Sizes as the reference prints them: `0B`, `512B`, `4.0K`, `1.5M`, one
 * decimal rounded half up (its `toFixed(1)`: a size over a power of 1024 is
 * exact in a double, so only true halves tie), integers without one. Past
 * `G` it stays in `G`, where the reference prints `undefined` for the unit.
 */
export function formatSize(bytes: number): string {
  if (bytes <= 0) return "0B";
  const units = ["B", "K", "M", "G"] as const;
  const exponent = Math.min(Math.floor((bytes.toString(2).length - 1) / 10), units.length - 1);
  const divisor = 1024 ** exponent;
  const unit = units[exponent]!;
  if (bytes % divisor === 0) return `${bytes / divisor}${unit}`;
  const scaled = bytes * 10;
  let tenths = Math.floor(scaled / divisor);
  const rest = scaled - tenths * divisor;
  if (rest * 2 >= divisor) tenths += 1;
  return `${Math.floor(tenths / 10)}.${tenths % 10}${unit}`;
}
