import { RpcTarget } from "cloudflare:workers";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { refusal } from "../../shared/refusals.ts";
import type { CapFailure, Result } from "../../shared/result.ts";
import { digestToken, isLegacyToken, mayBeBound, verifyToken } from "../../shared/token.ts";
import type {
  CapInfo,
  ChildPage,
  ListPage,
  MintedCap,
  MoveResult,
  RevokePending,
  Stat,
  VersionPage,
  WriteResult,
} from "../../shared/wire-types.ts";
import { readThroughCap } from "../cap-read.ts";
import type { CapStub } from "../cap-stub.ts";
import type { Env } from "../env.ts";
import { CapTarget } from "../rpc/cap-target.ts";
import { headerArg, optionsArg, pathArg } from "../rpc/rpc-args.ts";
import { redactError, rpcError } from "../rpc/rpc-error.ts";
import { RpcSessionBudget } from "../rpc/rpc-session-budget.ts";
import type { WatchCallback, WatchHandle } from "../rpc/rpc-watch.ts";

/**
 * One cap over a service binding (Workers RPC): the Cap'n Web interface of
 * docs/rpc.md, method for method, by delegation to the same {@link CapTarget},
 * so rights, paths, bounds and audit are decided once for both transports.
 *
 * Two things differ, both because of what Workers RPC carries:
 * - An error crosses with its text only (no own properties), so a refusal's
 *   code leads that text, then a colon and the table's words. Any other
 *   error is replaced by a fixed refusal first, as capnweb's sessions do: its
 *   text could name a key or a host path.
 * - Byte streams cross without buffering: {@link readStream}, and `write` of a
 *   `ReadableStream` with its `length` (R2 stores only a known length).
 *
 * The token lives in a `#` field: Workers RPC exposes prototype methods only.
 */
export class BindingCap extends RpcTarget {
  readonly #cap: { target: CapTarget; stub: CapStub } | CapFailure;
  readonly #env: Env;
  readonly #budget: RpcSessionBudget;
  readonly #main: boolean;

  /** `cap`: the cap's target, or the refusal every call on this stub answers (a token that names no cap). */
  constructor(cap: CapTarget | CapFailure, env: Env, budget: RpcSessionBudget, main: boolean) {
    super();
    this.#cap = cap instanceof CapTarget ? { target: cap, stub: CapTarget.stubOf(cap) } : cap;
    this.#env = env;
    this.#budget = budget;
    this.#main = main;
  }

  /**
   * Runs a call of this stub: a dead one's refusal first, before any argument is looked at, so
   * the same call on a forged, revoked or expired token answers the same bytes.
   */
  #crossing<T>(call: () => Promise<T>): Promise<T> {
    const cap = this.#cap;
    return crossing(() => ("target" in cap ? call() : Promise.reject(rpcError(cap))));
  }

  /** The cap's target, or its refusal thrown. */
  get #target(): CapTarget {
    if (!("target" in this.#cap)) throw rpcError(this.#cap);
    return this.#cap.target;
  }

  /** The cap's object, for the stream methods, or its refusal thrown. */
  get #stub(): CapStub {
    if (!("stub" in this.#cap)) throw rpcError(this.#cap);
    return this.#cap.stub;
  }

  read(path?: string): Promise<Uint8Array> {
    return this.#crossing(() => this.#target.read(path));
  }

  readText(path?: string): Promise<string> {
    return this.#crossing(() => this.#target.readText(path));
  }

  /**
   * The file's bytes as a stream, never held whole: a file of any size the
   * vault takes. Counted as one call; the bytes flow as the caller reads.
   */
  readStream(path?: string): Promise<ReadableStream<Uint8Array>> {
    return this.#crossing(async () => {
      const at = pathArg(path);
      return this.#budget.run(async () => {
        const read = await readThroughCap(this.#stub, this.#env, at, {});
        if (!read.ok) throw rpcError(read.error);
        if (read.value.status !== "body") throw rpcError(refusal("unavailable"));
        return read.value.body;
      });
    });
  }

  /** Bytes, text, or a `ReadableStream` with `options.length` (its exact size, as `Content-Length` is over HTTP). */
  write(
    path: string,
    data: Uint8Array | ArrayBuffer | string | ReadableStream<Uint8Array>,
    options?: { contentType?: string; ifMatch?: string; ifNoneMatch?: string; length?: number },
  ): Promise<WriteResult> {
    if (!(data instanceof ReadableStream)) {
      // `length` is the stream form's; given with bytes it must be theirs. Anything else is Cap'n Web's write.
      const isObject = typeof options === "object" && options !== null && !Array.isArray(options);
      const { length, ...rest } = isObject ? options : { length: undefined };
      return this.#crossing(async () => {
        const bytes = byteLength(data);
        if (length !== undefined && bytes !== null && length !== bytes) throw rpcError(refusal("bindingLength"));
        return this.#target.write(path, data, (isObject ? rest : options) as typeof rest);
      });
    }
    return this.#crossing(async () => {
      try {
        const at = pathArg(path);
        const o = optionsArg(options, ["contentType", "ifMatch", "ifNoneMatch", "length"]);
        if (typeof o.length !== "number" || !Number.isSafeInteger(o.length) || o.length < 0)
          throw rpcError(refusal("lengthRequired"));
        const headers = {
          length: o.length,
          contentType: headerArg(o.contentType),
          ifMatch: headerArg(o.ifMatch) ?? undefined,
          ifNoneMatch: headerArg(o.ifNoneMatch) ?? undefined,
        };
        const write = async (): Promise<Result<WriteResult>> => this.#stub.writeFile(at, data, headers);
        return unwrapped(await this.#budget.run(write));
      } catch (error) {
        // A refused write reads none of the caller's stream: cancelled, so its producer is not left waiting.
        await data.cancel().catch(() => undefined);
        throw error;
      }
    });
  }

  delete(path: string): Promise<null> {
    return this.#crossing(() => this.#target.delete(path));
  }

  move(from: string, to: string, options?: { overwrite?: boolean }): Promise<MoveResult> {
    return this.#crossing(() => this.#target.move(from, to, options));
  }

  makeFolder(path: string): Promise<null> {
    return this.#crossing(() => this.#target.makeFolder(path));
  }

  removeFolder(path: string): Promise<null> {
    return this.#crossing(() => this.#target.removeFolder(path));
  }

  stat(path?: string): Promise<Stat> {
    return this.#crossing(() => this.#target.stat(path));
  }

  list(path?: string, options?: { cursor?: string; limit?: number; depth?: number }): Promise<ListPage> {
    return this.#crossing(() => this.#target.list(path, options));
  }

  /** A child cap's stub (durable, revoked with this one), as `subdir` over Cap'n Web mints it. */
  async subdir(
    path?: string,
    options?: { rights?: string[]; ttlSeconds?: number | null; label?: string; history?: "all" },
  ): Promise<BindingCap> {
    const child = await this.#crossing(() => this.#target.subdir(path, options));
    return new BindingCap(child, this.#env, this.#budget, false);
  }

  info(): Promise<CapInfo> {
    return this.#crossing(() => this.#target.info());
  }

  children(options?: { cursor?: string; limit?: number }): Promise<ChildPage> {
    return this.#crossing(() => this.#target.children(options));
  }

  revoke(): Promise<RevokePending> {
    return this.#crossing(() => this.#target.revoke());
  }

  share(): Promise<MintedCap> {
    return this.#crossing(() => this.#target.share());
  }

  versions(path: string, options?: { cursor?: string; limit?: number }): Promise<VersionPage> {
    return this.#crossing(() => this.#target.versions(path, options));
  }

  readVersion(id: string): Promise<Uint8Array> {
    return this.#crossing(() => this.#target.readVersion(id));
  }

  restore(id: string): Promise<WriteResult> {
    return this.#crossing(() => this.#target.restore(id));
  }

  redact(id: string): Promise<null> {
    return this.#crossing(() => this.#target.redact(id));
  }

  /** Changes in this cap's subtree, to `callback`, until revoked, stopped, or the stub is disposed. */
  watch(callback: WatchCallback, options?: { since?: string }): Promise<WatchHandle> {
    return this.#crossing(() => this.#target.watch(callback, options));
  }

  /** The last stub of the cap `open()` gave is gone: the session's change feeds stop. */
  [Symbol.dispose](): void {
    if (this.#main) this.#budget.end();
  }
}

/**
 * The stub for `token`. It never refuses here: a pipelined call on it
 * (`open(t).readText(p)`) then fails once, with its own error, instead of
 * leaving a rejected `open` no caller awaits. A token that names no live cap
 * gives a stub whose every call answers `no_such_cap` before its arguments are
 * looked at, so a forged, unknown, revoked or expired token answers the same
 * bytes to the same call, as over HTTP (a forged one addresses no object: the
 * runtime keeps one for every name). A holder-bound cap is refused too, as an
 * unproven HTTP request is: it admits only a request signed by its key (DPoP,
 * RFC 9449), and a binding call is no HTTP request to sign (docs/workers.md).
 * A cap revoked after its stub was opened is refused by its object at the next
 * call, as a Cap'n Web session's is.
 */
export async function openCap(env: Env, token: unknown): Promise<BindingCap> {
  const budget = new RpcSessionBudget("live");
  const dead = (reason: "noSuchCap" | "legacyToken") => new BindingCap(refusal(reason), env, budget, true);
  if (typeof token !== "string" || !(await verifyToken(token, env.CAPVAULT_TOKEN_KEY)))
    return dead(typeof token === "string" && isLegacyToken(token) ? "legacyToken" : "noSuchCap");
  const { key } = await digestToken(token);
  const stub = capObjectStub(env, key);
  // One call to the object: is the cap alive, and does it admit a caller with no proof? The worker's holder
  // gate, not the object, asks an HTTP request for its proof; here the object is asked, and a bound cap
  // admits no unproven caller, for its whole life. A token whose first bit is clear names no bound cap.
  const live = mayBeBound(token) ? await stub.admitHolder({ kind: "unproved" }, Date.now()) : await stub.describe();
  if (!live.ok) return dead("noSuchCap");
  const origin = env.CAPVAULT_PUBLIC_URL?.replace(/\/+$/, "") ?? "";
  return new BindingCap(new CapTarget(stub, token, { env, origin, budget }, true), env, budget, true);
}

/** Runs a delegated call; whatever it throws leaves as a binding error (a refusal, or a fixed one). */
async function crossing<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    // As capnweb's sessions send errors: a refusal as it is; anything else as a fixed refusal, never its text.
    const thrown = error instanceof Error ? error : new Error("not an Error");
    const sent = (redactError(thrown) ?? thrown) as Error & { code: string };
    throw new Error(`${sent.code}: ${sent.message}`);
  }
}

function unwrapped<T>(result: Result<T>): T {
  if (!result.ok) throw rpcError(result.error);
  return result.value;
}

/** The byte length of bytes or text; null for anything else (Cap'n Web's write then refuses it). */
function byteLength(data: unknown): number | null {
  if (typeof data === "string") return new TextEncoder().encode(data).byteLength;
  return data instanceof Uint8Array || data instanceof ArrayBuffer ? data.byteLength : null;
}
