import { refusal } from "../../shared/refusals.ts";
import type { CapFailure, Result } from "../../shared/result.ts";

/** Errors this module made from a contract refusal: only these reach a client as they are. */
const REFUSALS = new WeakSet<Error>();

/**
 * A refusal as a thrown Error: capnweb sends its `message` and its own
 * enumerable properties, so the client reads `error.code` as the contract's
 * code and `error.message` as its text.
 */
export function rpcError(failure: CapFailure): Error {
  const error = Object.assign(new Error(failure.message), { code: failure.code });
  REFUSALS.add(error);
  return error;
}

/** The value of `result`, or its refusal thrown for capnweb to send. */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw rpcError(result.error);
  return result.value;
}

/**
 * capnweb's `onSendError`: every error leaving the session is a contract
 * refusal. Any other (capnweb's own on a call of no such method or a
 * malformed message, or an unexpected failure whose message could name a key)
 * is replaced by a fixed one, never echoed, and never with a stack.
 */
export function redactError(error: Error): Error | undefined {
  // undefined: capnweb sends it as it is, stack left out.
  if (REFUSALS.has(error)) return undefined;
  const replaced = rpcError(
    refusal(error instanceof TypeError || error instanceof RangeError ? "rpcNotACall" : "unavailable"),
  );
  // A replacement's stack would be sent: it has none.
  replaced.stack = "";
  return replaced;
}
