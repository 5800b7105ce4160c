/**
 * Lets the runtime serve other requests before going on. workerd runs every
 * request of the process on one thread, and it polls the network (accepts
 * connections, reads sockets) only when no event is ready: work whose every
 * step stays in the process (a 2 MiB write handed from the worker to a cap's
 * object to the local R2 simulator, a long loop) always has the next event
 * ready, so a cheap read on another cap waited for all of it. A zero timer
 * fires only once the queue is empty, so the network is polled in between.
 * (A resolved promise does not: it is a microtask, run before any event.)
 */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}
