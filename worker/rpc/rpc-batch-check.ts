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
  const work = batchWork(lines);
  if (work.calls > RPC_LIMITS.batchCalls) return refuse("rpcTooManyCalls", { limit: RPC_LIMITS.batchCalls });
  if (work.mints > RPC_LIMITS.batchMints) return refuse("rpcTooManyMints", { limit: RPC_LIMITS.batchMints });
  if (work.chain > RPC_LIMITS.pipelineDepth) return refuse("rpcPipelineTooDeep", { limit: RPC_LIMITS.pipelineDepth });
  // A batch has no later message to resolve its promise with: a call waiting on it would hold the request forever.
  for (const id of work.promises) if (!work.settled.has(id)) return refuse("rpcUnresolvedPromise");
  return ok(lines);
}

/** What a batch's messages ask for, read from their text: calls, mints, and the longest chain of calls on answers. */
export interface BatchWork {
  calls: number;
  mints: number;
  chain: number;
  /** Ids of the client's own promises the batch passes (`["promise", id]`). */
  promises: Set<number>;
  /** Ids the batch resolves or rejects (`["resolve", id, …]`, `["reject", id, …]`). */
  settled: Set<number>;
}

/**
 * Counts the calls a batch states, so a batch over a bound is refused before
 * any of it runs. Each `push` is the next import id (the main cap is 0), and a
 * call on an earlier push's answer is one link longer than that push. A
 * `.map()` replays its calls once per element, which the text cannot say:
 * those are counted once here and bounded as they run (RpcSessionBudget).
 * Lines that are not JSON are left to capnweb, which refuses the batch.
 */
export function batchWork(lines: string[]): BatchWork {
  const work: BatchWork = { calls: 0, mints: 0, chain: 0, promises: new Set(), settled: new Set() };
  const chainOf: number[] = [0];
  for (const line of lines) {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      continue;
    }
    if (!Array.isArray(message)) continue;
    if ((message[0] === "resolve" || message[0] === "reject") && typeof message[1] === "number") {
      work.settled.add(message[1]);
      expressionChain(message[2], work, chainOf);
      continue;
    }
    if (message[0] !== "push") continue;
    const chain = expressionChain(message[1], work, chainOf);
    chainOf.push(chain);
    work.chain = Math.max(work.chain, chain);
  }
  return work;
}

/** The longest chain of calls an expression ends, counting its calls into `work`; nesting is already bounded. */
function expressionChain(value: unknown, work: BatchWork, chainOf: number[]): number {
  const longest = (items: unknown[]) =>
    items.reduce<number>((m, v) => Math.max(m, expressionChain(v, work, chainOf)), 0);
  if (!Array.isArray(value)) return value !== null && typeof value === "object" ? longest(Object.values(value)) : 0;
  // An array value is sent wrapped in an array of its own.
  if (value.length === 1 && Array.isArray(value[0])) return longest(value[0]);
  const [tag, id, path, args] = value as [unknown, unknown, unknown, unknown];
  if (tag === "promise" && typeof id === "number") {
    work.promises.add(id);
    return 0;
  }
  if ((tag === "pipeline" || tag === "import" || tag === "remap") && typeof id === "number") {
    const on = chainOf[id] ?? 0;
    if (tag === "remap") return Math.max(on, longest(value.slice(2))) + 1;
    if (value.length < 4) return on;
    work.calls++;
    if (Array.isArray(path) && path[path.length - 1] === "subdir") work.mints++;
    // The arguments are a plain list of expressions.
    return Math.max(on, Array.isArray(args) ? longest(args) : 0) + 1;
  }
  return longest(value.slice(1));
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
