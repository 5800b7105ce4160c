import { readWithin } from "../shared/read-within.ts";
import { refusal } from "../shared/refusals.ts";

/**
 * Time and concurrency bounds on uploads. A client that opens an upload and
 * then sends nothing (or a byte now and then) would otherwise hold what the
 * upload holds (on disk: the temp file, the folders on its way, the
 * connection) for as long as it likes; a few hundred such clients exhaust
 * the host's descriptors. So an upload fails, storing nothing, when no byte
 * arrives for `idleMs`, or when it is not done by its deadline:
 * `minTotalMs` plus the time its declared length takes at
 * `minBytesPerSecond`. At most `maxConcurrent` run at once; more are refused
 * at once with `unavailable` (not queued: a queued upload would still hold
 * its connection and its client's bytes in flight, and say nothing).
 */
export interface UploadLimits {
  idleMs: number;
  minTotalMs: number;
  minBytesPerSecond: number;
  maxConcurrent: number;
}

/** What the worker applies (R2, and the disk backend's side of the wire). */
export const UPLOAD_LIMITS: UploadLimits = {
  idleMs: 30_000,
  minTotalMs: 60_000,
  minBytesPerSecond: 16 * 1024,
  maxConcurrent: 64,
};

export { readWithin } from "../shared/read-within.ts";

/** The refusal texts, also the reason a timed-out body is cancelled with. */
export const TOO_SLOW = refusal("tooSlow").message;
export const TOO_MANY_UPLOADS = refusal("tooManyUploads").message;

/** When an upload of `length` bytes starting now must be done. */
export function uploadDeadline(length: number, limits: UploadLimits, now = Date.now()): number {
  return paceDeadline(now, length, limits);
}

/**
 * When more than `received` bytes of an upload that began at `start` must
 * have arrived. The body keeps pace with `minBytesPerSecond` (after a grace
 * of `minTotalMs`) all the way, not only by its end: judged only at the end,
 * a byte every 25 s would hold one of the few upload slots for the whole
 * deadline of a 100 MiB upload, nearly two hours.
 */
export function paceDeadline(
  start: number,
  received: number,
  limits: Pick<UploadLimits, "minTotalMs" | "minBytesPerSecond">,
): number {
  return start + limits.minTotalMs + (received / limits.minBytesPerSecond) * 1000;
}

/**
 * `source` as a stream that errors (and cancels `source`) once it is too
 * slow by {@link readWithin}'s rules; `timedOut()` then says so. Only the
 * time spent waiting on `source` counts, never time its reader took.
 */
export function timedBody(
  source: ReadableStream<Uint8Array>,
  length: number,
  limits: UploadLimits,
): { body: ReadableStream<Uint8Array>; timedOut: () => boolean } {
  const reader = source.getReader();
  const start = Date.now();
  const deadline = uploadDeadline(length, limits, start);
  let received = 0;
  let timedOut = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await readWithin(reader, limits.idleMs, Math.min(deadline, paceDeadline(start, received, limits)));
      if (next === "timeout") {
        timedOut = true;
        await reader.cancel(TOO_SLOW).catch(() => undefined);
        return controller.error(new Error(TOO_SLOW));
      }
      if (next.done) controller.close();
      else {
        received += next.value.byteLength;
        controller.enqueue(next.value);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { body, timedOut: () => timedOut };
}

/** Counts uploads in progress against a limit. */
export class UploadSlots {
  private active = 0;

  /** Takes a slot, or returns `null` when `max` are taken; call the returned function once, when done. */
  take(max: number): (() => void) | null {
    if (this.active >= max) return null;
    this.active++;
    let released = false;
    return () => {
      if (!released) this.active--;
      released = true;
    };
  }
}

/** Reads the worker's optional settings (whole seconds, bytes, counts); anything unusable keeps the default. */
export function uploadLimitsFrom(env: {
  CAPVAULT_UPLOAD_IDLE_SECONDS?: string | undefined;
  CAPVAULT_UPLOAD_MIN_BYTES_PER_SECOND?: string | undefined;
  CAPVAULT_MAX_CONCURRENT_UPLOADS?: string | undefined;
}): UploadLimits {
  const positive = (raw: string | undefined, fallback: number, scale = 1) => {
    const value = Number(raw);
    return raw !== undefined && Number.isFinite(value) && value > 0 ? value * scale : fallback;
  };
  return {
    idleMs: positive(env.CAPVAULT_UPLOAD_IDLE_SECONDS, UPLOAD_LIMITS.idleMs, 1000),
    minTotalMs: UPLOAD_LIMITS.minTotalMs,
    minBytesPerSecond: positive(env.CAPVAULT_UPLOAD_MIN_BYTES_PER_SECOND, UPLOAD_LIMITS.minBytesPerSecond),
    maxConcurrent: Math.floor(positive(env.CAPVAULT_MAX_CONCURRENT_UPLOADS, UPLOAD_LIMITS.maxConcurrent)),
  };
}
