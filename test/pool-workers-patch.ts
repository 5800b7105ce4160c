import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * A fix for a quadratic slowdown in the pinned @cloudflare/vitest-pool-workers
 * (0.23.0, as 0.15.1 before it), applied to its installed file before the
 * workers project starts.
 *
 * Its `createProxyPrototypeClass` wraps the wrapper class's prototype in a new
 * `Proxy` on every construction, around the previous one. Every request the
 * tests send through `exports.default` and every Durable Object instance is a
 * construction, so after N of them each property read runs N nested traps: in
 * a file of a few hundred requests, one request to a route that answers in
 * 1 ms took 50 to 100 ms, and `npm test` spent minutes there.
 * Upstream: cloudflare/workers-sdk#15092, fixed by #15106 ("install wrapper
 * prototype proxy once") only under the package's new name,
 * @cloudflare/vitest-plugin (1.5.1 has it): 0.23.0, the newest
 * vitest-pool-workers, still wraps on every construction (revocation.workers
 * alone: its tests took 29 s unpatched, 13 s patched). Moving to the new
 * package makes this file unneeded (docs/toolchain.md).
 *
 * The fix is theirs in substance: install the proxy once, still from the
 * first construction (workerd inspects the class before that). It rewrites
 * exactly one known text and fails loudly if it finds neither that text nor
 * its own, so a version bump cannot skip it silently. Idempotent, and atomic
 * (write then rename) because several test processes may load this at once;
 * on a read-only install it warns and leaves the file (slow, not wrong).
 */
const BUGGY = "\tfunction Class(...args) {\n\t\tClass.prototype = new Proxy(Class.prototype, {";
// Same line count as the text it replaces, so the pool's source map still points right.
const FIXED =
  "\tlet proxied = false; function Class(...args) { // capvault: workers-sdk#15092\n\t\tif (!proxied && (proxied = true)) Class.prototype = new Proxy(Class.prototype, {";

export function patchPoolWorkers(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const file = path.join(
    root,
    "node_modules/@cloudflare/vitest-pool-workers/dist/worker/lib/cloudflare/test-internal.mjs",
  );
  const text = readFileSync(file, "utf8");
  if (text.includes(FIXED)) return;
  if (text.split(BUGGY).length !== 2) {
    throw new Error(`${file}: createProxyPrototypeClass is not the pinned version's; see test/pool-workers-patch.ts`);
  }
  const temp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, text.replace(BUGGY, FIXED));
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    // A read-only install: the tests still pass, only slower. Say so rather than stop every project.
    console.warn(
      `capvault: could not patch ${file} (${(error as NodeJS.ErrnoException).code}); workers tests will be slow`,
    );
  }
}
