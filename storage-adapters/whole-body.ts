/**
 * Bodies up to this size are read whole before an R2 put, so their SHA-256
 * goes in with the put: one R2 write instead of a streamed put plus a copy
 * to record the hash afterwards (see R2Storage.seal). The bound keeps the
 * memory of a cap's object small even with every upload slot busy
 * (64 × 256 KiB = 16 MiB).
 */
export const WHOLE_BODY_MAX = 256 * 1024;

/**
 * Exactly `length` bytes of `body`, or null when it delivers more or fewer,
 * or fails: a body that is not what it declared stores nothing. Reads at
 * most `length` + one chunk, so a lying sender cannot make it hold more.
 */
export async function readWhole(body: ReadableStream<Uint8Array>, length: number): Promise<Uint8Array | null> {
  const bytes = new Uint8Array(length);
  const reader = body.getReader();
  let filled = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return filled === length ? bytes : null;
      if (filled + value.byteLength > length) {
        await reader.cancel().catch(() => undefined);
        return null;
      }
      bytes.set(value, filled);
      filled += value.byteLength;
    }
  } catch {
    return null;
  }
}
