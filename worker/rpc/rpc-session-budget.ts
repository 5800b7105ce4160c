import { refusal, refuse } from "../../shared/refusals.ts";
import { ok, type Result } from "../../shared/result.ts";
import { yieldTurn } from "../../shared/yield-turn.ts";
import { rpcError } from "./rpc-error.ts";
import { RPC_LIMITS } from "./rpc-limits.ts";

/**
 * What one session (an HTTP batch, or a WebSocket) may still spend, shared
 * by every cap target it hands out, so minting children cannot multiply the
 * bounds. A batch has totals (calls, mints, bytes read) because its answers
 * are all held until it ends; a WebSocket streams its answers and has no
 * end, so it bounds what runs and waits at once, and its calls and mints by
 * a rate (token buckets).
 *
 * Every call waits a turn of the runtime before it runs: calls chained on
 * answers would otherwise run back to back as microtasks, and workerd's one
 * thread would serve no other request until the whole session was done.
 */
export class RpcSessionBudget {
  readonly kind: "batch" | "live";
  #calls = 0;
  #mints = 0;
  readonly #callBucket: TokenBucket;
  readonly #mintBucket: TokenBucket;
  #readBytes = 0;
  #heldBytes = 0;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  #onMainDead: () => void = () => undefined;
  #onFlood: () => void = () => undefined;
  #rateRefusals = 0;
  #watches = 0;
  /** Aborted when the session ends: its change feeds stop. */
  readonly #ended = new AbortController();
  /** A batch's calls reach no cap until the whole batch was read (see BatchTransport). */
  readonly #gate = Promise.withResolvers<void>();

  /** `now`: the clock the live buckets refill by (a test's own, to refill them without waiting). */
  constructor(kind: "batch" | "live", now: () => number = Date.now) {
    this.kind = kind;
    this.#callBucket = new TokenBucket(RPC_LIMITS.liveCalls, RPC_LIMITS.liveCallsPerSecond, now);
    this.#mintBucket = new TokenBucket(RPC_LIMITS.liveMints, RPC_LIMITS.liveMintsPerSecond, now);
    if (kind === "live") this.#gate.resolve();
    // A batch refused whole may have no call waiting on its gate.
    this.#gate.promise.catch(() => undefined);
  }

  /** Every message of the batch was read: its calls may run. */
  open(): void {
    this.#gate.resolve();
  }

  /** The batch was refused: calls waiting to run never do. */
  refuseAll(): void {
    this.#gate.reject(rpcError(refusal("rpcMalformed")));
  }

  /**
   * Runs one call within the bounds (`bytes`: what its arguments hold;
   * `mint`: it makes a cap); refused calls throw a contract refusal.
   */
  async run<T>(call: () => Promise<T>, bytes = 0, mint = false): Promise<T> {
    if (this.kind === "batch") {
      if (++this.#calls > RPC_LIMITS.batchCalls)
        throw rpcError(refusal("rpcTooManyCalls", { limit: RPC_LIMITS.batchCalls }));
      if (mint && ++this.#mints > RPC_LIMITS.batchMints)
        throw rpcError(refusal("rpcTooManyMints", { limit: RPC_LIMITS.batchMints }));
    } else {
      if (!this.#callBucket.take()) {
        this.#refusedByRate();
        throw rpcError(refusal("rpcCallRate", { perSecond: RPC_LIMITS.liveCallsPerSecond }));
      }
      if (mint && !this.#mintBucket.take()) {
        this.#refusedByRate();
        throw rpcError(refusal("rpcMintRate", { perSecond: RPC_LIMITS.liveMintsPerSecond }));
      }
    }
    if (this.#heldBytes + bytes > RPC_LIMITS.heldBytes) throw rpcError(refusal("rpcBytesWaiting"));
    this.#heldBytes += bytes;
    try {
      return await this.#runHeld(call);
    } finally {
      this.#heldBytes -= bytes;
    }
  }

  async #runHeld<T>(call: () => Promise<T>): Promise<T> {
    await this.#gate.promise;
    if (this.#running >= RPC_LIMITS.inFlight) {
      if (this.#waiting.length >= RPC_LIMITS.waiting) throw rpcError(refusal("rpcCallsWaiting"));
      // The slot is handed over by the call that ends, so `running` never passes the bound.
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else this.#running++;
    try {
      await yieldTurn();
      return await call();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }

  /** Counts a read's bytes against the bounds before they are read. */
  spendRead(bytes: number): Result<null> {
    if (bytes > RPC_LIMITS.readBytes) return refuse("rpcReadTooLarge", { limit: RPC_LIMITS.readBytes });
    if (this.kind === "batch") {
      this.#readBytes += bytes;
      if (this.#readBytes > RPC_LIMITS.batchReadBytes)
        return refuse("rpcReadBudget", { limit: RPC_LIMITS.batchReadBytes });
    }
    return ok(null);
  }

  /** Takes a change-feed slot (live sessions only); `release` gives it back. */
  startWatch(): Result<{ signal: AbortSignal; release: () => void }> {
    if (this.kind === "batch") return refuse("rpcWatchNeedsLive");
    if (this.#watches >= RPC_LIMITS.watches) return refuse("rpcTooManyWatches", { limit: RPC_LIMITS.watches });
    this.#watches++;
    let released = false;
    const release = () => {
      if (!released) this.#watches--;
      released = true;
    };
    return ok({ signal: this.#ended.signal, release });
  }

  /** The session is over (its socket closed): every feed it held stops. */
  end(): void {
    this.#ended.abort();
  }

  /** What to do once a WebSocket session passed {@link RPC_LIMITS.liveRefusals} rate refusals (it closes). */
  whenFlooding(hook: () => void): void {
    this.#onFlood = hook;
  }

  #refusedByRate(): void {
    if (++this.#rateRefusals === RPC_LIMITS.liveRefusals + 1) this.#onFlood();
  }

  /** What to do once the session's main cap answers `no_such_cap` (a WebSocket closes). */
  whenMainDies(hook: () => void): void {
    this.#onMainDead = hook;
  }

  mainDied(): void {
    this.#onMainDead();
  }
}

/** Up to `size` tokens at once, refilled at `perSecond`: a burst is bounded, and so is the rate. */
class TokenBucket {
  readonly #size: number;
  readonly #perMs: number;
  readonly #now: () => number;
  #tokens: number;
  #at: number;

  constructor(size: number, perSecond: number, now: () => number) {
    this.#size = size;
    this.#perMs = perSecond / 1000;
    this.#now = now;
    this.#tokens = size;
    this.#at = now();
  }

  take(): boolean {
    const now = this.#now();
    this.#tokens = Math.min(this.#size, this.#tokens + Math.max(0, now - this.#at) * this.#perMs);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens--;
    return true;
  }
}
