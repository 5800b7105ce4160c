import fs from "node:fs";

/**
 * Starts Miniflare with its entry worker's bucket routes closed.
 *
 * Miniflare's entry worker, in front of the vault's, answers
 * `GET /cdn-cgi/local/r2/public/<bucket id>/<key>` itself from every local R2
 * bucket (miniflare 4.20260730 and later, workers-sdk#14119), and
 * `/cdn-cgi/local/r2/s3/…` for one given S3 credentials, on the vault's own
 * public port, with `Access-Control-Allow-Origin: *` and no option to turn
 * either off. Any client of the port could read every file of every R2 root
 * and its versions by key, with no cap. See docs/security.md.
 *
 * Miniflare reads the entry worker's source from its package while it
 * starts; this hands it the same source with those two routes' service
 * bindings read as absent, so such a request reaches the vault (which knows
 * no such route) like any other. It rewrites exactly the known text and
 * throws when the text differs, so a Miniflare upgrade stops the launcher
 * rather than leave the routes open; {@link assertEntrySealed} then proves it
 * on the live port.
 *
 * @example
 * const mf = await withSealedEntry(async () => {
 *   const mf = new Miniflare(options);
 *   await mf.ready;
 *   return mf;
 * });
 * await assertEntrySealed(origin, "BUCKET");
 */
export async function withSealedEntry<T>(start: () => Promise<T>): Promise<T> {
  const original = fs.readFileSync;
  const wrapped = function (this: unknown, ...args: unknown[]) {
    const result = (original as (...a: unknown[]) => unknown).apply(fs, args);
    const file = args[0];
    return typeof file === "string" && ENTRY_WORKER.test(file) && typeof result === "string"
      ? sealEntry(result, file)
      : result;
  };
  fs.readFileSync = wrapped as typeof fs.readFileSync;
  try {
    return await start();
  } finally {
    fs.readFileSync = original;
  }
}

/** Miniflare's entry worker, as its package ships it. */
const ENTRY_WORKER = /[\\/]miniflare[\\/]dist[\\/]src[\\/]workers[\\/]core[\\/]entry\.worker\.js$/;

/** Where the entry worker looks up the services that serve a bucket; each is read once, at one route. */
const BUCKET_ROUTES = ["env[CoreBindings.SERVICE_R2_PUBLIC]", "env[CoreBindings.SERVICE_R2_S3]"];

/** `source` with the bucket routes' services read as absent; throws unless each is found exactly once. */
export function sealEntry(source: string, file: string): string {
  let sealed = source;
  for (const route of BUCKET_ROUTES) {
    if (sealed.split(route).length !== 2) {
      throw new Error(`${file}: Miniflare's entry worker is not the pinned version's; see launcher/sealed-entry.ts`);
    }
    sealed = sealed.replace(route, "undefined");
  }
  return sealed;
}

/**
 * Fails unless the live port hands the bucket routes to the vault: a key
 * that exists nowhere answers as the vault answers an unknown route (its
 * JSON error), never as Miniflare's bucket server (its plain 404, or a 401).
 */
export async function assertEntrySealed(origin: string, bucketId: string): Promise<void> {
  for (const route of ["/cdn-cgi/local/r2/public", "/cdn-cgi/local/r2/s3"]) {
    const res = await fetch(`${origin}${route}/${bucketId}/capvault-seal-probe`);
    const body = await res.text();
    const fromVault = res.headers.get("content-type")?.startsWith("application/json") && body.includes('"error"');
    if (!fromVault || res.headers.has("access-control-allow-origin")) {
      throw new Error(`Miniflare's entry worker answered ${route} itself; refusing to run with the bucket exposed`);
    }
  }
}
