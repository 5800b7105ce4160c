import type { ErrorCode } from "./error-codes.ts";
import { settleBody } from "./settle-body.ts";

/** A refusal that crosses every boundary (DO RPC, disk host, HTTP) as plain data. */
export interface CapFailure {
  code: ErrorCode;
  message: string;
}

/**
 * Every fallible operation returns a value instead of throwing.
 *
 * Why: errors thrown across Durable Object RPC lose their properties, and a
 * rejected RPC promise makes the vitest pool exit 1 even when the test caught
 * it. A tagged union keeps the code intact and forces callers to look at it.
 */
export type Result<T> = { ok: true; value: T } | { ok: false; error: CapFailure };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });

/** The failed Result carrying `failure`, a refusal from a table (shared/refusals.ts or a tool's own). */
export function failed(failure: CapFailure): Result<never> {
  return { ok: false, error: failure };
}

/**
 * Refuses a write without storing its body: settles the body (read and
 * dropped if small, so the client's connection stays usable; else cancelled,
 * so the sender is not left streaming into nothing) and returns the refusal.
 */
export async function refuseBody<T>(
  body: ReadableStream<Uint8Array>,
  result: Result<T>,
  declaredLength?: number,
): Promise<Result<T>> {
  await settleBody(body, declaredLength);
  return result;
}
