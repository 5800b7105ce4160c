import { FsCap } from "../clients/typescript/fs-cap.ts";
import type { BenchContext } from "./bench-context.ts";
import { makeRow, type Row } from "./bench-row.ts";
import { mintChild, put } from "./http-ops.ts";
import { median } from "./stats.ts";

/** How long the bench waits for one event before it calls the feed broken. */
const GIVE_UP_MS = 10_000;

/**
 * A change made through one cap reaching a watcher on another cap over the
 * same subtree: from the start of the writer's `PUT` to the event arriving
 * on the watcher's stream (server-sent events, read by the SDK's `watch`),
 * one write at a time on R2. The bound is a second; it is measured
 * here, not in a timed test, as every speed target is.
 */
export async function watch(ctx: BenchContext): Promise<Row[]> {
  const writer = await mintChild(ctx.vault.rootCapUrl, "watch-bench");
  const watcher = new FsCap(await mintChild(ctx.vault.rootCapUrl, "watch-bench"));
  const stop = new AbortController();
  const events = watcher.watch({ signal: stop.signal })[Symbol.asyncIterator]();
  /** The next event for `path`, skipping others (warm-up writes); rejects after {@link GIVE_UP_MS}. */
  const eventFor = async (path: string): Promise<void> => {
    const deadline = performance.now() + GIVE_UP_MS;
    for (;;) {
      const left = deadline - performance.now();
      const timer = new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`watch: no event for ${path} within 10 s`)), left).unref(),
      );
      pending ??= events.next();
      const event = await Promise.race([pending, timer]);
      pending = null;
      if (event.done) throw new Error("watch: the feed ended");
      if (event.value.path === path) return;
    }
  };
  let pending: Promise<IteratorResult<{ path: string }>> | null = null;
  const samples: number[] = [];
  try {
    // The stream opens on the first pull and shows only what is committed after: write until one is seen.
    pending = events.next();
    for (let w = 0; ; w++) {
      await put(`${writer}/file?path=warm-${w}.txt`);
      const seen = await Promise.race([pending.then(() => true), new Promise((r) => setTimeout(r, 200, false))]);
      if (seen) break;
      if (w === 50) throw new Error("watch: the feed never opened");
    }
    for (let i = 0; i < ctx.size.sequential * 2; i++) {
      const path = `f${i % 8}.txt`;
      const t0 = performance.now();
      await put(`${writer}/file?path=${encodeURIComponent(path)}`);
      await eventFor(path);
      samples.push(performance.now() - t0);
    }
  } finally {
    stop.abort();
  }
  const spec = { section: "watch", unit: "ms", floorName: null } as const;
  return [
    makeRow({ ...spec, row: "watch: write on one cap → event on another, p50", cap: median(samples) }),
    makeRow({
      ...spec,
      row: "watch: write on one cap → event on another, max",
      cap: Math.max(...samples),
      goal: { on: "cap", op: "<=", value: 1000 },
    }),
  ];
}
