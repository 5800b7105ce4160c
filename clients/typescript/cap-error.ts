import type { CapErrorCode } from "./types.ts";

/**
 * A refusal from the vault (or the failure to reach it), carrying the wire
 * error code. Messages come from the server's fixed per-code texts or from the
 * SDK; neither ever contains a cap token or admin token.
 *
 * `status` is the HTTP status, or `0` when no HTTP response was involved: the
 * vault was unreachable (`unavailable`) or the SDK refused before sending
 * (e.g. `length_required` for a stream without a length).
 *
 * @example
 * try {
 *   await fs.read("../../../etc/passwd");
 * } catch (e) {
 *   if (e instanceof CapError && e.code === "path_escapes") console.log("refused:", e.message);
 * }
 */
export class CapError extends Error {
  readonly code: CapErrorCode;
  readonly status: number;

  constructor(code: CapErrorCode, status: number, message: string) {
    super(message);
    this.name = "CapError";
    this.code = code;
    this.status = status;
  }

  /** `{ error: { code, message } }`, the wire shape, plus the status. */
  toJSON(): { error: { code: CapErrorCode; message: string; status: number } } {
    return { error: { code: this.code, message: this.message, status: this.status } };
  }
}

/**
 * True for any `CapError`, also across realms or duplicated SDK copies where `instanceof` fails.
 * @example
 * const text = await fs.readText("maybe.md").catch((e) => (isCapError(e) && e.code === "not_found" ? null : Promise.reject(e)));
 */
export function isCapError(value: unknown): value is CapError {
  return (
    value instanceof CapError ||
    (value instanceof Error && value.name === "CapError" && typeof (value as CapError).code === "string")
  );
}
