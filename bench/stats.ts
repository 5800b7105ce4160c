/** Median of `values` (mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Latencies of `count` calls, one after another, in ms. */
export async function sequential(count: number, op: (i: number) => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) samples.push(await timed(() => op(i)));
  return samples;
}

/** Operations per second of `total` calls with `inFlight` running at once. */
export async function throughput(
  total: number,
  inFlight: number,
  op: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < total) await op(next++);
  };
  const ms = await timed(() => Promise.all(Array.from({ length: Math.min(inFlight, total) }, worker)));
  return total / (ms / 1000);
}

/**
 * Runs `rounds` rounds of each variant, interleaved (A B, B A, A B, …, so
 * neither always goes first on a machine whose load drifts), and returns the
 * median of each variant's per-round figures.
 */
export async function interleaved<K extends string>(
  rounds: number,
  variants: Record<K, () => Promise<number>>,
): Promise<Record<K, number>> {
  const keys = Object.keys(variants) as K[];
  const figures = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as Record<K, number[]>;
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? keys : [...keys].reverse();
    for (const k of order) figures[k].push(await variants[k]());
  }
  return Object.fromEntries(keys.map((k) => [k, median(figures[k])])) as Record<K, number>;
}
