/**
 * Lets the runtime serve other requests before going on. workerd runs every
 * request of the process on one thread, so a long synchronous step of one
 * request (a search or a diff over 1 MiB, tens of ms each) delays all the
 * others; steps run back to back, chained by promises, delay them by their
 * sum. A zero timer is a new task: what is already queued (another
 * request's next step, the network) runs first. A resolved promise is not:
 * it is a microtask, run before any of that.
 */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
