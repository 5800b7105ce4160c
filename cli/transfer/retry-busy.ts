import { setTimeout as sleep } from "node:timers/promises";
import { isCapError } from "../../clients/typescript/cap-error.ts";

/** Waits before the second and third attempts. */
const BACKOFF_MS = [250, 1000];

/**
 * Runs one file's transfer again when the vault answered 503 `unavailable`:
 * it refuses uploads at once, rather than queueing them, when too many run
 * (other clients' included), and says a client may retry. Nothing else is
 * retried: an unreachable vault (status 0) or a refusal will not change.
 */
export async function retryBusy<T>(attempt: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await attempt();
    } catch (error) {
      const busy = isCapError(error) && error.code === "unavailable" && error.status === 503;
      if (!busy || i >= BACKOFF_MS.length) throw error;
      await sleep(BACKOFF_MS[i]);
    }
  }
}
