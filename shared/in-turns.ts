import { yieldTurn } from "./yield-turn.ts";

/**
 * A long loop written as a generator that yields after each step of bounded
 * work (a few ms): run at once, or with a turn of the runtime between steps
 * so that other requests on workerd's one thread are not held up behind it
 * (see yield-turn.ts). Both runs are the same code, so they give the same
 * result; only where other tasks may run differs.
 */
export type Steps<T> = Generator<void, T, void>;

/** Runs every step back to back. */
export function runAtOnce<T>(steps: Steps<T>): T {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** Runs the steps with a turn between each two: what is queued meanwhile runs first. */
export async function runInTurns<T>(steps: Steps<T>): Promise<T> {
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    await yieldTurn();
  }
}
