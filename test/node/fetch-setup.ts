export {};

/**
 * workerd closes a keep-alive connection after 5 s idle, and Node's fetch
 * keeps an idle one for 4 s. On two busy cores the client's timer can fire
 * more than a second late, and its next request then goes out on a socket
 * the server has already closed ("fetch failed: other side closed"): a client
 * race, not a vault failure. Tests give idle connections up after 1 s, so the
 * client always lets go first. Node's own dispatcher class is reused (the
 * undici it bundles), with only its keep-alive times changed.
 */
const GLOBAL_DISPATCHER = Symbol.for("undici.globalDispatcher.1");
type Dispatcher = { constructor: new (options: object) => Dispatcher };
const slot = globalThis as unknown as Record<symbol, Dispatcher | undefined>;

// The global dispatcher is made on first use; a refused local connection makes it.
await fetch("http://127.0.0.1:1/").catch(() => undefined);
const current = slot[GLOBAL_DISPATCHER];
if (current) slot[GLOBAL_DISPATCHER] = new current.constructor({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });
