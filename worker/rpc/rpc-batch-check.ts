import { refuse } from "../../shared/refusals.ts";
import { ok, type Result } from "../../shared/result.ts";
import { RPC_LIMITS } from "./rpc-limits.ts";

/**
 * Judges a batch's text before capnweb parses any of it: at most
 * {@link RPC_LIMITS.batchMessages} lines, each nesting at most
 * {@link RPC_LIMITS.depth} deep. One linear scan with no recursion, so a
 * message built to exhaust a recursive parser (`[[[[…`) is refused for the
 * price of reading it. Cycles need no check: a message is JSON (a tree), and
 * a pipelined reference names only an earlier call's answer.
 */
export function checkBatch(text: string): Result<string[]> {
  const lines = text === "" ? [] : text.split("\n");
  if (lines.length > RPC_LIMITS.batchMessages) return refuse("rpcTooManyMessages", { limit: RPC_LIMITS.batchMessages });
  for (const line of lines)
    if (nestingDepth(line) > RPC_LIMITS.depth) return refuse("rpcTooDeep", { limit: RPC_LIMITS.depth });
  return ok(lines);
}

/** The deepest `[`/`{` nesting of JSON text, brackets inside strings skipped. */
export function nestingDepth(json: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const ch = json.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // a backslash escapes the next character
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return deepest;
}
